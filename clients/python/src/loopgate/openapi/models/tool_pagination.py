from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.tool_pagination_learned_type_0 import ToolPaginationLearnedType0
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
            learned (None | ToolPaginationLearnedType0 | Unset): What walks established about the tool's paging (P14, P15),
                used by every later
                walk: `pageBase` (its first page number), `sizeCap` (a page size the API caps
                silently), `nextAt` and `totalAt` (where the next position and the total were
                read), `responsePaging` (its responses link the next page: `_all_pages` is offered),
                and `evidence`, one sentence per fact. Null until a walk learned something; dropped
                when a response contradicts it.
            learned_confirmed_at (datetime.datetime | None | Unset): When a walk last confirmed `learned`.
     """

    confidence: str
    note: str
    parameters: ToolPaginationParameters
    source: str
    style: str
    tool_id: str
    hint: Any | Unset = UNSET
    learned: None | ToolPaginationLearnedType0 | Unset = UNSET
    learned_confirmed_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_pagination_learned_type_0 import ToolPaginationLearnedType0 # noqa: PLC0415
        from ..models.tool_pagination_parameters import ToolPaginationParameters # noqa: PLC0415
        confidence = self.confidence

        note = self.note

        parameters = self.parameters.to_dict()

        source = self.source

        style = self.style

        tool_id = self.tool_id

        hint = self.hint

        learned: dict[str, Any] | None | Unset
        if isinstance(self.learned, Unset):
            learned = UNSET
        elif isinstance(self.learned, ToolPaginationLearnedType0):
            learned = self.learned.to_dict()
        else:
            learned = self.learned

        learned_confirmed_at: None | str | Unset
        if isinstance(self.learned_confirmed_at, Unset):
            learned_confirmed_at = UNSET
        elif isinstance(self.learned_confirmed_at, datetime.datetime):
            learned_confirmed_at = self.learned_confirmed_at.isoformat()
        else:
            learned_confirmed_at = self.learned_confirmed_at


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
        if learned is not UNSET:
            field_dict["learned"] = learned
        if learned_confirmed_at is not UNSET:
            field_dict["learned_confirmed_at"] = learned_confirmed_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_pagination_learned_type_0 import ToolPaginationLearnedType0 # noqa: PLC0415
        from ..models.tool_pagination_parameters import ToolPaginationParameters # noqa: PLC0415
        d = dict(src_dict)
        confidence = d.pop("confidence")

        note = d.pop("note")

        parameters = ToolPaginationParameters.from_dict(d.pop("parameters"))




        source = d.pop("source")

        style = d.pop("style")

        tool_id = d.pop("tool_id")

        hint = d.pop("hint", UNSET)

        def _parse_learned(data: object) -> None | ToolPaginationLearnedType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                learned_type_0 = ToolPaginationLearnedType0.from_dict(data)



                return learned_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolPaginationLearnedType0 | Unset, data)

        learned = _parse_learned(d.pop("learned", UNSET))


        def _parse_learned_confirmed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                learned_confirmed_at_type_0 = datetime.datetime.fromisoformat(data)



                return learned_confirmed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        learned_confirmed_at = _parse_learned_confirmed_at(d.pop("learned_confirmed_at", UNSET))


        tool_pagination = cls(
            confidence=confidence,
            note=note,
            parameters=parameters,
            source=source,
            style=style,
            tool_id=tool_id,
            hint=hint,
            learned=learned,
            learned_confirmed_at=learned_confirmed_at,
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
