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





T = TypeVar("T", bound="AgentPatch")



@_attrs_define
class AgentPatch:
    """ 
        Attributes:
            agent_tools (list[Binding] | None | Unset): Replaces every binding when present.
            deployment_id (None | str | Unset):
            direct_tool_budget (int | None | Unset): A new budget of directly offered tools, or `null` for the service-wide
                setting.
            instructions (None | str | Unset):
            name (None | str | Unset):
            token_budget (int | None | Unset): A new size-guard budget in tokens, or `null` for the service-wide setting.
     """

    agent_tools: list[Binding] | None | Unset = UNSET
    deployment_id: None | str | Unset = UNSET
    direct_tool_budget: int | None | Unset = UNSET
    instructions: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    token_budget: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.binding import Binding # noqa: PLC0415
        agent_tools: list[dict[str, Any]] | None | Unset
        if isinstance(self.agent_tools, Unset):
            agent_tools = UNSET
        elif isinstance(self.agent_tools, list):
            agent_tools = []
            for agent_tools_type_0_item_data in self.agent_tools:
                agent_tools_type_0_item = agent_tools_type_0_item_data.to_dict()
                agent_tools.append(agent_tools_type_0_item)


        else:
            agent_tools = self.agent_tools

        deployment_id: None | str | Unset
        if isinstance(self.deployment_id, Unset):
            deployment_id = UNSET
        else:
            deployment_id = self.deployment_id

        direct_tool_budget: int | None | Unset
        if isinstance(self.direct_tool_budget, Unset):
            direct_tool_budget = UNSET
        else:
            direct_tool_budget = self.direct_tool_budget

        instructions: None | str | Unset
        if isinstance(self.instructions, Unset):
            instructions = UNSET
        else:
            instructions = self.instructions

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if agent_tools is not UNSET:
            field_dict["agentTools"] = agent_tools
        if deployment_id is not UNSET:
            field_dict["deployment_id"] = deployment_id
        if direct_tool_budget is not UNSET:
            field_dict["direct_tool_budget"] = direct_tool_budget
        if instructions is not UNSET:
            field_dict["instructions"] = instructions
        if name is not UNSET:
            field_dict["name"] = name
        if token_budget is not UNSET:
            field_dict["token_budget"] = token_budget

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.binding import Binding # noqa: PLC0415
        d = dict(src_dict)
        def _parse_agent_tools(data: object) -> list[Binding] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                agent_tools_type_0 = []
                _agent_tools_type_0 = data
                for agent_tools_type_0_item_data in (_agent_tools_type_0):
                    agent_tools_type_0_item = Binding.from_dict(agent_tools_type_0_item_data)



                    agent_tools_type_0.append(agent_tools_type_0_item)

                return agent_tools_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Binding] | None | Unset, data)

        agent_tools = _parse_agent_tools(d.pop("agentTools", UNSET))


        def _parse_deployment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deployment_id = _parse_deployment_id(d.pop("deployment_id", UNSET))


        def _parse_direct_tool_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        direct_tool_budget = _parse_direct_tool_budget(d.pop("direct_tool_budget", UNSET))


        def _parse_instructions(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        instructions = _parse_instructions(d.pop("instructions", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("token_budget", UNSET))


        agent_patch = cls(
            agent_tools=agent_tools,
            deployment_id=deployment_id,
            direct_tool_budget=direct_tool_budget,
            instructions=instructions,
            name=name,
            token_budget=token_budget,
        )

        return agent_patch

