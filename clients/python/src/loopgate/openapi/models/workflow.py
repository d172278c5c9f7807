from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.workflow_steps_item import WorkflowStepsItem





T = TypeVar("T", bound="Workflow")



@_attrs_define
class Workflow:
    """ 
        Attributes:
            agent_id (str):
            created_at (datetime.datetime):
            id (str): `wf_…`
            name (str):
            org_id (str):
            steps (list[WorkflowStepsItem]):
            updated_at (datetime.datetime):
     """

    agent_id: str
    created_at: datetime.datetime
    id: str
    name: str
    org_id: str
    steps: list[WorkflowStepsItem]
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.workflow_steps_item import WorkflowStepsItem # noqa: PLC0415
        agent_id = self.agent_id

        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        org_id = self.org_id

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)



        updated_at = self.updated_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "agent_id": agent_id,
            "created_at": created_at,
            "id": id,
            "name": name,
            "org_id": org_id,
            "steps": steps,
            "updated_at": updated_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.workflow_steps_item import WorkflowStepsItem # noqa: PLC0415
        d = dict(src_dict)
        agent_id = d.pop("agent_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        name = d.pop("name")

        org_id = d.pop("org_id")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in (_steps):
            steps_item = WorkflowStepsItem.from_dict(steps_item_data)



            steps.append(steps_item)


        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        workflow = cls(
            agent_id=agent_id,
            created_at=created_at,
            id=id,
            name=name,
            org_id=org_id,
            steps=steps,
            updated_at=updated_at,
        )


        workflow.additional_properties = d
        return workflow

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
