from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.tool_view import ToolView





T = TypeVar("T", bound="StepView")



@_attrs_define
class StepView:
    """ The next model step of a thread.

        Attributes:
            restricted (bool): `true` when an unread cut result limits this step to the retrieval tools.
            step (int):
            system (list[str]): System messages: the loop guidance (for agents holding looping tools) and the agent's
                instructions.
            tools (list[ToolView]):
     """

    restricted: bool
    step: int
    system: list[str]
    tools: list[ToolView]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_view import ToolView # noqa: PLC0415
        restricted = self.restricted

        step = self.step

        system = self.system



        tools = []
        for tools_item_data in self.tools:
            tools_item = tools_item_data.to_dict()
            tools.append(tools_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "restricted": restricted,
            "step": step,
            "system": system,
            "tools": tools,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_view import ToolView # noqa: PLC0415
        d = dict(src_dict)
        restricted = d.pop("restricted")

        step = d.pop("step")

        system = cast(list[str], d.pop("system"))


        tools = []
        _tools = d.pop("tools")
        for tools_item_data in (_tools):
            tools_item = ToolView.from_dict(tools_item_data)



            tools.append(tools_item)


        step_view = cls(
            restricted=restricted,
            step=step,
            system=system,
            tools=tools,
        )


        step_view.additional_properties = d
        return step_view

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
