from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PlacedTool")



@_attrs_define
class PlacedTool:
    """ One bound tool in the preview.

        Attributes:
            name (str):
            reason (str): Why it is where it is, in a few words.
            tool_id (str):
            toolkit (None | str | Unset): The connected-app toolkit (D2); absent for the org's own API and MCP tools.
     """

    name: str
    reason: str
    tool_id: str
    toolkit: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        reason = self.reason

        tool_id = self.tool_id

        toolkit: None | str | Unset
        if isinstance(self.toolkit, Unset):
            toolkit = UNSET
        else:
            toolkit = self.toolkit


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "reason": reason,
            "tool_id": tool_id,
        })
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        reason = d.pop("reason")

        tool_id = d.pop("tool_id")

        def _parse_toolkit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolkit = _parse_toolkit(d.pop("toolkit", UNSET))


        placed_tool = cls(
            name=name,
            reason=reason,
            tool_id=tool_id,
            toolkit=toolkit,
        )


        placed_tool.additional_properties = d
        return placed_tool

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
