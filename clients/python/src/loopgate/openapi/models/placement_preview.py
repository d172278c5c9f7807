from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.placed_tool import PlacedTool





T = TypeVar("T", bound="PlacementPreview")



@_attrs_define
class PlacementPreview:
    """ `GET /v1/agents/{agent_id}/placement`.

        Attributes:
            agent_id (str):
            budget (int): Directly offered tools before toolkits are pooled (D1).
            direct (list[PlacedTool]): Offered to the model directly, in binding order.
            pooled (list[PlacedTool]): Behind `search_tools` / `load_tool`, in binding order.
     """

    agent_id: str
    budget: int
    direct: list[PlacedTool]
    pooled: list[PlacedTool]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.placed_tool import PlacedTool # noqa: PLC0415
        agent_id = self.agent_id

        budget = self.budget

        direct = []
        for direct_item_data in self.direct:
            direct_item = direct_item_data.to_dict()
            direct.append(direct_item)



        pooled = []
        for pooled_item_data in self.pooled:
            pooled_item = pooled_item_data.to_dict()
            pooled.append(pooled_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "budget": budget,
            "direct": direct,
            "pooled": pooled,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.placed_tool import PlacedTool # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        budget = d.pop("budget")

        direct = []
        _direct = d.pop("direct")
        for direct_item_data in (_direct):
            direct_item = PlacedTool.from_dict(direct_item_data)



            direct.append(direct_item)


        pooled = []
        _pooled = d.pop("pooled")
        for pooled_item_data in (_pooled):
            pooled_item = PlacedTool.from_dict(pooled_item_data)



            pooled.append(pooled_item)


        placement_preview = cls(
            agent_id=agent_id,
            budget=budget,
            direct=direct,
            pooled=pooled,
        )


        placement_preview.additional_properties = d
        return placement_preview

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
