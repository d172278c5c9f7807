from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.run_input_input_type_0 import RunInputInputType0





T = TypeVar("T", bound="RunInput")



@_attrs_define
class RunInput:
    """ `POST /v1/workflows/{workflow_id}/runs` body.

        Attributes:
            experiment (bool | Unset): Experiment runs never read from or write to the dataset cache.
            input_ (None | RunInputInputType0 | Unset): The run input, read by refs as `$.input…`.
     """

    experiment: bool | Unset = UNSET
    input_: None | RunInputInputType0 | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_input_input_type_0 import RunInputInputType0 # noqa: PLC0415
        experiment = self.experiment

        input_: dict[str, Any] | None | Unset
        if isinstance(self.input_, Unset):
            input_ = UNSET
        elif isinstance(self.input_, RunInputInputType0):
            input_ = self.input_.to_dict()
        else:
            input_ = self.input_


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if experiment is not UNSET:
            field_dict["experiment"] = experiment
        if input_ is not UNSET:
            field_dict["input"] = input_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_input_input_type_0 import RunInputInputType0 # noqa: PLC0415
        d = dict(src_dict)
        experiment = d.pop("experiment", UNSET)

        def _parse_input_(data: object) -> None | RunInputInputType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_type_0 = RunInputInputType0.from_dict(data)



                return input_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunInputInputType0 | Unset, data)

        input_ = _parse_input_(d.pop("input", UNSET))


        run_input = cls(
            experiment=experiment,
            input_=input_,
        )

        return run_input

