from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_pagination_parameters import ToolPaginationParameters





T = TypeVar("T", bound="ToolPagination")



@_attrs_define
class ToolPagination:
    """ How a tool pages (P13), for the Studio's tool card.

        Attributes:
            confidence (str): `declared` (a hint), `high`, `medium` (a cursor by name; the first response
                confirms it) or `low` (a name without a declared type).
            note (str): One sentence for a person.
            parameters (ToolPaginationParameters): The parameters a walk sets, by role: `{size, page, offset, cursor}`, each
                a
                parameter name (`body.<name>` for a body field) or null.
            source (str): `hint` (the schema's `x-loopgate-pagination` decided) or `detected`.
            style (str): The style a walk would use: `offset`, `page`, `cursor`, or `none` (no way to
                advance in the schema: `_all_pages` is not offered).
            tool_id (str):
            hint (Any | Unset): The `x-loopgate-pagination` hint as stored, when there is one; edit it with
                `PATCH /v1/tools/{tool_id}` (`input_schema`).
     """

    confidence: str
    note: str
    parameters: ToolPaginationParameters
    source: str
    style: str
    tool_id: str
    hint: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_pagination_parameters import ToolPaginationParameters # noqa: PLC0415
        confidence = self.confidence

        note = self.note

        parameters = self.parameters.to_dict()

        source = self.source

        style = self.style

        tool_id = self.tool_id

        hint = self.hint


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "confidence": confidence,
            "note": note,
            "parameters": parameters,
            "source": source,
            "style": style,
            "tool_id": tool_id,
        })
        if hint is not UNSET:
            field_dict["hint"] = hint

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_pagination_parameters import ToolPaginationParameters # noqa: PLC0415
        d = dict(src_dict)
        confidence = d.pop("confidence")

        note = d.pop("note")

        parameters = ToolPaginationParameters.from_dict(d.pop("parameters"))




        source = d.pop("source")

        style = d.pop("style")

        tool_id = d.pop("tool_id")

        hint = d.pop("hint", UNSET)

        tool_pagination = cls(
            confidence=confidence,
            note=note,
            parameters=parameters,
            source=source,
            style=style,
            tool_id=tool_id,
            hint=hint,
        )


        tool_pagination.additional_properties = d
        return tool_pagination

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
