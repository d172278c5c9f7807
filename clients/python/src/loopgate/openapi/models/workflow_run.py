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
  from ..models.workflow_run_input import WorkflowRunInput
  from ..models.workflow_run_steps import WorkflowRunSteps





T = TypeVar("T", bound="WorkflowRun")



@_attrs_define
class WorkflowRun:
    """ 
        Attributes:
            experiment (bool):
            id (str): `run_…`
            input_ (WorkflowRunInput): The run input that `$.input` references read.
            started_at (datetime.datetime):
            status (str): `running`, `succeeded` or `failed`; for scheduled runs also `skipped` (a due time
                that fell while the previous run still went, `overlap: "skip"`) and `interrupted`
                (the replica running it stopped before it finished).
            steps (WorkflowRunSteps): Step id → output (`_skipped` / `_error` for steps skipped or failed).
            trigger (str): `api` (`POST …/runs`) or `schedule`.
            workflow_id (str):
            finished_at (datetime.datetime | None | Unset):
            schedule_id (None | str | Unset): The schedule that made the run (`trigger: "schedule"`).
            scheduled_for (datetime.datetime | None | Unset): The due time the run is for (not its start).
     """

    experiment: bool
    id: str
    input_: WorkflowRunInput
    started_at: datetime.datetime
    status: str
    steps: WorkflowRunSteps
    trigger: str
    workflow_id: str
    finished_at: datetime.datetime | None | Unset = UNSET
    schedule_id: None | str | Unset = UNSET
    scheduled_for: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.workflow_run_input import WorkflowRunInput # noqa: PLC0415
        from ..models.workflow_run_steps import WorkflowRunSteps # noqa: PLC0415
        experiment = self.experiment

        id = self.id

        input_ = self.input_.to_dict()

        started_at = self.started_at.isoformat()

        status = self.status

        steps = self.steps.to_dict()

        trigger = self.trigger

        workflow_id = self.workflow_id

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        schedule_id: None | str | Unset
        if isinstance(self.schedule_id, Unset):
            schedule_id = UNSET
        else:
            schedule_id = self.schedule_id

        scheduled_for: None | str | Unset
        if isinstance(self.scheduled_for, Unset):
            scheduled_for = UNSET
        elif isinstance(self.scheduled_for, datetime.datetime):
            scheduled_for = self.scheduled_for.isoformat()
        else:
            scheduled_for = self.scheduled_for


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "experiment": experiment,
            "id": id,
            "input": input_,
            "started_at": started_at,
            "status": status,
            "steps": steps,
            "trigger": trigger,
            "workflow_id": workflow_id,
        })
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if schedule_id is not UNSET:
            field_dict["schedule_id"] = schedule_id
        if scheduled_for is not UNSET:
            field_dict["scheduled_for"] = scheduled_for

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.workflow_run_input import WorkflowRunInput # noqa: PLC0415
        from ..models.workflow_run_steps import WorkflowRunSteps # noqa: PLC0415
        d = dict(src_dict)
        experiment = d.pop("experiment")

        id = d.pop("id")

        input_ = WorkflowRunInput.from_dict(d.pop("input"))




        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        status = d.pop("status")

        steps = WorkflowRunSteps.from_dict(d.pop("steps"))




        trigger = d.pop("trigger")

        workflow_id = d.pop("workflow_id")

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)



                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))


        def _parse_schedule_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        schedule_id = _parse_schedule_id(d.pop("schedule_id", UNSET))


        def _parse_scheduled_for(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                scheduled_for_type_0 = datetime.datetime.fromisoformat(data)



                return scheduled_for_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        scheduled_for = _parse_scheduled_for(d.pop("scheduled_for", UNSET))


        workflow_run = cls(
            experiment=experiment,
            id=id,
            input_=input_,
            started_at=started_at,
            status=status,
            steps=steps,
            trigger=trigger,
            workflow_id=workflow_id,
            finished_at=finished_at,
            schedule_id=schedule_id,
            scheduled_for=scheduled_for,
        )


        workflow_run.additional_properties = d
        return workflow_run

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
