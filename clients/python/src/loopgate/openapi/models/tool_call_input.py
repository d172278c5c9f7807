from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_call_input_arguments import ToolCallInputArguments





T = TypeVar("T", bound="ToolCallInput")



@_attrs_define
class ToolCallInput:
    """ `POST …/tool-calls` body.

        Attributes:
            name (str):
            arguments (ToolCallInputArguments | Unset): The tool's own arguments (its `input_schema`), plus the reserved
                arguments below on a binding with `loop_responses: true` (LOOP_ENGINE L2). Reserved arguments are read by
                loopgate and never sent upstream (L3). A call that uses any of them answers the envelope `{items, _itemCount,
                _pagingComplete, _likelyMoreRows, _total?, _stoppedBy?, _note, _resultId, _continue?, _unmatchedFields?,
                _forEachErrors?, _cache?}`.
            experiment (bool | Unset): Experiment runs never read from or write to the dataset cache.
     """

    name: str
    arguments: ToolCallInputArguments | Unset = UNSET
    experiment: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_input_arguments import ToolCallInputArguments # noqa: PLC0415
        name = self.name

        arguments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.arguments, Unset):
            arguments = self.arguments.to_dict()

        experiment = self.experiment


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
        })
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if experiment is not UNSET:
            field_dict["experiment"] = experiment

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_call_input_arguments import ToolCallInputArguments # noqa: PLC0415
        d = dict(src_dict)
        name = d.pop("name")

        _arguments = d.pop("arguments", UNSET)
        arguments: ToolCallInputArguments | Unset
        if isinstance(_arguments,  Unset):
            arguments = UNSET
        else:
            arguments = ToolCallInputArguments.from_dict(_arguments)




        experiment = d.pop("experiment", UNSET)

        tool_call_input = cls(
            name=name,
            arguments=arguments,
            experiment=experiment,
        )

        return tool_call_input

