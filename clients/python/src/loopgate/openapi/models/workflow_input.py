from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.workflow_input_steps_item import WorkflowInputStepsItem





T = TypeVar("T", bound="WorkflowInput")



@_attrs_define
class WorkflowInput:
    """ 
        Attributes:
            agent_id (str):
            name (str):
            steps (list[WorkflowInputStepsItem]): `[{id, type: "tool", tool, input, loop?, if?}]`
     """

    agent_id: str
    name: str
    steps: list[WorkflowInputStepsItem]





    def to_dict(self) -> dict[str, Any]:
        from ..models.workflow_input_steps_item import WorkflowInputStepsItem # noqa: PLC0415
        agent_id = self.agent_id

        name = self.name

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "agent_id": agent_id,
            "name": name,
            "steps": steps,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.workflow_input_steps_item import WorkflowInputStepsItem # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        name = d.pop("name")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in (_steps):
            steps_item = WorkflowInputStepsItem.from_dict(steps_item_data)



            steps.append(steps_item)


        workflow_input = cls(
            agent_id=agent_id,
            name=name,
            steps=steps,
        )

        return workflow_input

