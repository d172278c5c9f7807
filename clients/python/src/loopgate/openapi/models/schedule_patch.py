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
  from ..models.schedule_patch_input_type_0 import SchedulePatchInputType0





T = TypeVar("T", bound="SchedulePatch")



@_attrs_define
class SchedulePatch:
    """ `PATCH /v1/schedules/{schedule_id}` body: what is given changes.

        Attributes:
            catch_up (CatchUp | None | Unset):
            cron (None | str | Unset):
            input_ (None | SchedulePatchInputType0 | Unset):
            overlap (None | Overlap | Unset):
            paused (bool | None | Unset): `true` pauses; `false` resumes from the next due time after now (missed ones
                while paused are not run).
            run_as (None | RunAs | Unset):
            timezone (None | str | Unset):
     """

    catch_up: CatchUp | None | Unset = UNSET
    cron: None | str | Unset = UNSET
    input_: None | SchedulePatchInputType0 | Unset = UNSET
    overlap: None | Overlap | Unset = UNSET
    paused: bool | None | Unset = UNSET
    run_as: None | RunAs | Unset = UNSET
    timezone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_as import RunAs # noqa: PLC0415
        from ..models.schedule_patch_input_type_0 import SchedulePatchInputType0 # noqa: PLC0415
        catch_up: None | str | Unset
        if isinstance(self.catch_up, Unset):
            catch_up = UNSET
        elif isinstance(self.catch_up, CatchUp):
            catch_up = self.catch_up.value
        else:
            catch_up = self.catch_up

        cron: None | str | Unset
        if isinstance(self.cron, Unset):
            cron = UNSET
        else:
            cron = self.cron

        input_: dict[str, Any] | None | Unset
        if isinstance(self.input_, Unset):
            input_ = UNSET
        elif isinstance(self.input_, SchedulePatchInputType0):
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

        paused: bool | None | Unset
        if isinstance(self.paused, Unset):
            paused = UNSET
        else:
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
        })
        if catch_up is not UNSET:
            field_dict["catch_up"] = catch_up
        if cron is not UNSET:
            field_dict["cron"] = cron
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
        from ..models.schedule_patch_input_type_0 import SchedulePatchInputType0 # noqa: PLC0415
        d = dict(src_dict)
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


        def _parse_cron(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cron = _parse_cron(d.pop("cron", UNSET))


        def _parse_input_(data: object) -> None | SchedulePatchInputType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_type_0 = SchedulePatchInputType0.from_dict(data)



                return input_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SchedulePatchInputType0 | Unset, data)

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


        def _parse_paused(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        paused = _parse_paused(d.pop("paused", UNSET))


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


        schedule_patch = cls(
            catch_up=catch_up,
            cron=cron,
            input_=input_,
            overlap=overlap,
            paused=paused,
            run_as=run_as,
            timezone=timezone,
        )

        return schedule_patch

