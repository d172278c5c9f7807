from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.catch_up import CatchUp
from ..models.overlap import Overlap
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.run_as import RunAs
  from ..models.schedule_input_input_type_0 import ScheduleInputInputType0





T = TypeVar("T", bound="ScheduleInput")



@_attrs_define
class ScheduleInput:
    """ `POST /v1/workflows/{workflow_id}/schedules` body.

        Attributes:
            cron (str): 5 fields (`minute hour day-of-month month day-of-week`), or 6 with leading seconds.
            catch_up (CatchUp | None | Unset):
            input_ (None | ScheduleInputInputType0 | Unset): The run input (`$.input…`); default `{}`.
            overlap (None | Overlap | Unset):
            paused (bool | Unset): Default `false`.
            run_as (None | RunAs | Unset):
            timezone (None | str | Unset): An IANA time zone name; default `UTC`.
     """

    cron: str
    catch_up: CatchUp | None | Unset = UNSET
    input_: None | ScheduleInputInputType0 | Unset = UNSET
    overlap: None | Overlap | Unset = UNSET
    paused: bool | Unset = UNSET
    run_as: None | RunAs | Unset = UNSET
    timezone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_as import RunAs # noqa: PLC0415
        from ..models.schedule_input_input_type_0 import ScheduleInputInputType0 # noqa: PLC0415
        cron = self.cron

        catch_up: None | str | Unset
        if isinstance(self.catch_up, Unset):
            catch_up = UNSET
        elif isinstance(self.catch_up, CatchUp):
            catch_up = self.catch_up.value
        else:
            catch_up = self.catch_up

        input_: dict[str, Any] | None | Unset
        if isinstance(self.input_, Unset):
            input_ = UNSET
        elif isinstance(self.input_, ScheduleInputInputType0):
            input_ = self.input_.to_dict()
        else:
            input_ = self.input_

        overlap: None | str | Unset
        if isinstance(self.overlap, Unset):
            overlap = UNSET
        elif isinstance(self.overlap, Overlap):
            overlap = self.overlap.value
        else:
            overlap = self.overlap

        paused = self.paused

        run_as: dict[str, Any] | None | Unset
        if isinstance(self.run_as, Unset):
            run_as = UNSET
        elif isinstance(self.run_as, RunAs):
            run_as = self.run_as.to_dict()
        else:
            run_as = self.run_as

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "cron": cron,
        })
        if catch_up is not UNSET:
            field_dict["catch_up"] = catch_up
        if input_ is not UNSET:
            field_dict["input"] = input_
        if overlap is not UNSET:
            field_dict["overlap"] = overlap
        if paused is not UNSET:
            field_dict["paused"] = paused
        if run_as is not UNSET:
            field_dict["run_as"] = run_as
        if timezone is not UNSET:
            field_dict["timezone"] = timezone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_as import RunAs # noqa: PLC0415
        from ..models.schedule_input_input_type_0 import ScheduleInputInputType0 # noqa: PLC0415
        d = dict(src_dict)
        cron = d.pop("cron")

        def _parse_catch_up(data: object) -> CatchUp | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                catch_up_type_0 = CatchUp(data)



                return catch_up_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CatchUp | None | Unset, data)

        catch_up = _parse_catch_up(d.pop("catch_up", UNSET))


        def _parse_input_(data: object) -> None | ScheduleInputInputType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_type_0 = ScheduleInputInputType0.from_dict(data)



                return input_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleInputInputType0 | Unset, data)

        input_ = _parse_input_(d.pop("input", UNSET))


        def _parse_overlap(data: object) -> None | Overlap | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                overlap_type_0 = Overlap(data)



                return overlap_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Overlap | Unset, data)

        overlap = _parse_overlap(d.pop("overlap", UNSET))


        paused = d.pop("paused", UNSET)

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


        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))


        schedule_input = cls(
            cron=cron,
            catch_up=catch_up,
            input_=input_,
            overlap=overlap,
            paused=paused,
            run_as=run_as,
            timezone=timezone,
        )

        return schedule_input

