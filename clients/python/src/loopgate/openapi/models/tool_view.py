from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.tool_view_input_schema import ToolViewInputSchema





T = TypeVar("T", bound="ToolView")



@_attrs_define
class ToolView:
    """ A tool as the model sees it.

        Attributes:
            description (str):
            input_schema (ToolViewInputSchema):
            name (str):
     """

    description: str
    input_schema: ToolViewInputSchema
    name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_view_input_schema import ToolViewInputSchema # noqa: PLC0415
        description = self.description

        input_schema = self.input_schema.to_dict()

        name = self.name


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "description": description,
            "input_schema": input_schema,
            "name": name,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_view_input_schema import ToolViewInputSchema # noqa: PLC0415
        d = dict(src_dict)
        description = d.pop("description")

        input_schema = ToolViewInputSchema.from_dict(d.pop("input_schema"))




        name = d.pop("name")

        tool_view = cls(
            description=description,
            input_schema=input_schema,
            name=name,
        )


        tool_view.additional_properties = d
        return tool_view

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
