from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.binding import Binding





T = TypeVar("T", bound="AgentInput")



@_attrs_define
class AgentInput:
    """ 
        Attributes:
            deployment_id (str):
            name (str):
            agent_tools (list[Binding] | Unset):
            direct_tool_budget (int | None | Unset): Tools offered directly (0–1000) before connected-app toolkits go behind
                `search_tools` / `load_tool`; unset: the service-wide setting (15 by default).
            instructions (str | Unset): System instructions handed to the model with every step.
            token_budget (int | None | Unset): The size guard's conversation budget for this agent's results, in tokens
                (1000–1000000); unset: the service-wide setting (25,000 by default).
     """

    deployment_id: str
    name: str
    agent_tools: list[Binding] | Unset = UNSET
    direct_tool_budget: int | None | Unset = UNSET
    instructions: str | Unset = UNSET
    token_budget: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.binding import Binding # noqa: PLC0415
        deployment_id = self.deployment_id

        name = self.name

        agent_tools: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.agent_tools, Unset):
            agent_tools = []
            for agent_tools_item_data in self.agent_tools:
                agent_tools_item = agent_tools_item_data.to_dict()
                agent_tools.append(agent_tools_item)



        direct_tool_budget: int | None | Unset
        if isinstance(self.direct_tool_budget, Unset):
            direct_tool_budget = UNSET
        else:
            direct_tool_budget = self.direct_tool_budget

        instructions = self.instructions

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "deployment_id": deployment_id,
            "name": name,
        })
        if agent_tools is not UNSET:
            field_dict["agentTools"] = agent_tools
        if direct_tool_budget is not UNSET:
            field_dict["direct_tool_budget"] = direct_tool_budget
        if instructions is not UNSET:
            field_dict["instructions"] = instructions
        if token_budget is not UNSET:
            field_dict["token_budget"] = token_budget

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.binding import Binding # noqa: PLC0415
        d = dict(src_dict)
        deployment_id = d.pop("deployment_id")

        name = d.pop("name")

        _agent_tools = d.pop("agentTools", UNSET)
        agent_tools: list[Binding] | Unset = UNSET
        if _agent_tools is not UNSET:
            agent_tools = []
            for agent_tools_item_data in _agent_tools:
                agent_tools_item = Binding.from_dict(agent_tools_item_data)



                agent_tools.append(agent_tools_item)


        def _parse_direct_tool_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        direct_tool_budget = _parse_direct_tool_budget(d.pop("direct_tool_budget", UNSET))


        instructions = d.pop("instructions", UNSET)

        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("token_budget", UNSET))


        agent_input = cls(
            deployment_id=deployment_id,
            name=name,
            agent_tools=agent_tools,
            direct_tool_budget=direct_tool_budget,
            instructions=instructions,
            token_budget=token_budget,
        )

        return agent_input

