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
  from ..models.last_run import LastRun
  from ..models.run_as import RunAs
  from ..models.schedule_view_input import ScheduleViewInput





T = TypeVar("T", bound="ScheduleView")



@_attrs_define
class ScheduleView:
    """ A schedule as returned.

        Attributes:
            catch_up (str):
            created_at (datetime.datetime):
            cron (str):
            id (str): `sch_…`
            input_ (ScheduleViewInput):
            next_runs (list[datetime.datetime]): The next three due times (empty while paused).
            overlap (str):
            paused (bool):
            timezone (str):
            workflow_id (str):
            last_run (LastRun | None | Unset):
            run_as (None | RunAs | Unset):
     """

    catch_up: str
    created_at: datetime.datetime
    cron: str
    id: str
    input_: ScheduleViewInput
    next_runs: list[datetime.datetime]
    overlap: str
    paused: bool
    timezone: str
    workflow_id: str
    last_run: LastRun | None | Unset = UNSET
    run_as: None | RunAs | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.last_run import LastRun # noqa: PLC0415
        from ..models.run_as import RunAs # noqa: PLC0415
        from ..models.schedule_view_input import ScheduleViewInput # noqa: PLC0415
        catch_up = self.catch_up

        created_at = self.created_at.isoformat()

        cron = self.cron

        id = self.id

        input_ = self.input_.to_dict()

        next_runs = []
        for next_runs_item_data in self.next_runs:
            next_runs_item = next_runs_item_data.isoformat()
            next_runs.append(next_runs_item)



        overlap = self.overlap

        paused = self.paused

        timezone = self.timezone

        workflow_id = self.workflow_id

        last_run: dict[str, Any] | None | Unset
        if isinstance(self.last_run, Unset):
            last_run = UNSET
        elif isinstance(self.last_run, LastRun):
            last_run = self.last_run.to_dict()
        else:
            last_run = self.last_run

        run_as: dict[str, Any] | None | Unset
        if isinstance(self.run_as, Unset):
            run_as = UNSET
        elif isinstance(self.run_as, RunAs):
            run_as = self.run_as.to_dict()
        else:
            run_as = self.run_as


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "catch_up": catch_up,
            "created_at": created_at,
            "cron": cron,
            "id": id,
            "input": input_,
            "next_runs": next_runs,
            "overlap": overlap,
            "paused": paused,
            "timezone": timezone,
            "workflow_id": workflow_id,
        })
        if last_run is not UNSET:
            field_dict["last_run"] = last_run
        if run_as is not UNSET:
            field_dict["run_as"] = run_as

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.last_run import LastRun # noqa: PLC0415
        from ..models.run_as import RunAs # noqa: PLC0415
        from ..models.schedule_view_input import ScheduleViewInput # noqa: PLC0415
        d = dict(src_dict)
        catch_up = d.pop("catch_up")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        cron = d.pop("cron")

        id = d.pop("id")

        input_ = ScheduleViewInput.from_dict(d.pop("input"))




        next_runs = []
        _next_runs = d.pop("next_runs")
        for next_runs_item_data in (_next_runs):
            next_runs_item = datetime.datetime.fromisoformat(next_runs_item_data)



            next_runs.append(next_runs_item)


        overlap = d.pop("overlap")

        paused = d.pop("paused")

        timezone = d.pop("timezone")

        workflow_id = d.pop("workflow_id")

        def _parse_last_run(data: object) -> LastRun | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_run_type_0 = LastRun.from_dict(data)



                return last_run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LastRun | None | Unset, data)

        last_run = _parse_last_run(d.pop("last_run", UNSET))


        def _parse_run_as(data: object) -> None | RunAs | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                run_as_type_0 = RunAs.from_dict(data)



                return run_as_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunAs | Unset, data)

        run_as = _parse_run_as(d.pop("run_as", UNSET))


        schedule_view = cls(
            catch_up=catch_up,
            created_at=created_at,
            cron=cron,
            id=id,
            input_=input_,
            next_runs=next_runs,
            overlap=overlap,
            paused=paused,
            timezone=timezone,
            workflow_id=workflow_id,
            last_run=last_run,
            run_as=run_as,
        )


        schedule_view.additional_properties = d
        return schedule_view

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
