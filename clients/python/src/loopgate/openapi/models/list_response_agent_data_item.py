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
  from ..models.binding import Binding





T = TypeVar("T", bound="ListResponseAgentDataItem")



@_attrs_define
class ListResponseAgentDataItem:
    """ 
        Attributes:
            agent_tools (list[Binding]):
            created_at (datetime.datetime):
            deployment_id (str):
            id (str): `agt_…`
            instructions (str):
            name (str):
            org_id (str):
            updated_at (datetime.datetime):
            direct_tool_budget (int | None | Unset): Tools offered directly before connected-app toolkits go behind tool
                search
                (D1); `null`: the service-wide setting (15 unless configured).
            token_budget (int | None | Unset): The size guard's conversation budget for this agent's results, in tokens
                (G1);
                `null`: the service-wide setting (25,000 unless configured).
     """

    agent_tools: list[Binding]
    created_at: datetime.datetime
    deployment_id: str
    id: str
    instructions: str
    name: str
    org_id: str
    updated_at: datetime.datetime
    direct_tool_budget: int | None | Unset = UNSET
    token_budget: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.binding import Binding # noqa: PLC0415
        agent_tools = []
        for agent_tools_item_data in self.agent_tools:
            agent_tools_item = agent_tools_item_data.to_dict()
            agent_tools.append(agent_tools_item)



        created_at = self.created_at.isoformat()

        deployment_id = self.deployment_id

        id = self.id

        instructions = self.instructions

        name = self.name

        org_id = self.org_id

        updated_at = self.updated_at.isoformat()

        direct_tool_budget: int | None | Unset
        if isinstance(self.direct_tool_budget, Unset):
            direct_tool_budget = UNSET
        else:
            direct_tool_budget = self.direct_tool_budget

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agentTools": agent_tools,
            "created_at": created_at,
            "deployment_id": deployment_id,
            "id": id,
            "instructions": instructions,
            "name": name,
            "org_id": org_id,
            "updated_at": updated_at,
        })
        if direct_tool_budget is not UNSET:
            field_dict["direct_tool_budget"] = direct_tool_budget
        if token_budget is not UNSET:
            field_dict["token_budget"] = token_budget

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.binding import Binding # noqa: PLC0415
        d = dict(src_dict)
        agent_tools = []
        _agent_tools = d.pop("agentTools")
        for agent_tools_item_data in (_agent_tools):
            agent_tools_item = Binding.from_dict(agent_tools_item_data)



            agent_tools.append(agent_tools_item)


        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        deployment_id = d.pop("deployment_id")

        id = d.pop("id")

        instructions = d.pop("instructions")

        name = d.pop("name")

        org_id = d.pop("org_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        def _parse_direct_tool_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        direct_tool_budget = _parse_direct_tool_budget(d.pop("direct_tool_budget", UNSET))


        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("token_budget", UNSET))


        list_response_agent_data_item = cls(
            agent_tools=agent_tools,
            created_at=created_at,
            deployment_id=deployment_id,
            id=id,
            instructions=instructions,
            name=name,
            org_id=org_id,
            updated_at=updated_at,
            direct_tool_budget=direct_tool_budget,
            token_budget=token_budget,
        )


        list_response_agent_data_item.additional_properties = d
        return list_response_agent_data_item

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
