from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_call_input_arguments_for_each_values_type_1_filter import ToolCallInputArgumentsForEachValuesType1Filter





T = TypeVar("T", bound="ToolCallInputArgumentsForEachValuesType1")



@_attrs_define
class ToolCallInputArgumentsForEachValuesType1:
    """ Values by reference: read server-side from a stored result of this thread.

        Attributes:
            from_result (str): The `_resultId` of a stored result of this thread.
            path (str): The dot-path into each stored row, e.g. `id`.
            filter_ (ToolCallInputArgumentsForEachValuesType1Filter | Unset): Keep rows where `field` (a dot-path; through
                an array it matches when any element does) compares with `value` by `op`.
     """

    from_result: str
    path: str
    filter_: ToolCallInputArgumentsForEachValuesType1Filter | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_input_arguments_for_each_values_type_1_filter import ToolCallInputArgumentsForEachValuesType1Filter # noqa: PLC0415
        from_result = self.from_result

        path = self.path

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "fromResult": from_result,
            "path": path,
        })
        if filter_ is not UNSET:
            field_dict["filter"] = filter_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_call_input_arguments_for_each_values_type_1_filter import ToolCallInputArgumentsForEachValuesType1Filter # noqa: PLC0415
        d = dict(src_dict)
        from_result = d.pop("fromResult")

        path = d.pop("path")

        _filter_ = d.pop("filter", UNSET)
        filter_: ToolCallInputArgumentsForEachValuesType1Filter | Unset
        if isinstance(_filter_,  Unset):
            filter_ = UNSET
        else:
            filter_ = ToolCallInputArgumentsForEachValuesType1Filter.from_dict(_filter_)




        tool_call_input_arguments_for_each_values_type_1 = cls(
            from_result=from_result,
            path=path,
            filter_=filter_,
        )


        tool_call_input_arguments_for_each_values_type_1.additional_properties = d
        return tool_call_input_arguments_for_each_values_type_1

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
