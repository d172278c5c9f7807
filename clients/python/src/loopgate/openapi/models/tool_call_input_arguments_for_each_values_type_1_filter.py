from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tool_call_input_arguments_for_each_values_type_1_filter_op import ToolCallInputArgumentsForEachValuesType1FilterOp
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ToolCallInputArgumentsForEachValuesType1Filter")



@_attrs_define
class ToolCallInputArgumentsForEachValuesType1Filter:
    """ Keep rows where `field` (a dot-path; through an array it matches when any element does) compares with `value` by
    `op`.

        Attributes:
            field (str):
            op (ToolCallInputArgumentsForEachValuesType1FilterOp):
            value (bool | float | list[bool | float | str] | str | Unset): The value compared with; a list (at most 200) for
                `in`; `true`/`false` for `exists`.
     """

    field: str
    op: ToolCallInputArgumentsForEachValuesType1FilterOp
    value: bool | float | list[bool | float | str] | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        field = self.field

        op = self.op.value

        value: bool | float | list[bool | float | str] | str | Unset
        if isinstance(self.value, Unset):
            value = UNSET
        elif isinstance(self.value, list):
            value = []
            for value_type_3_item_data in self.value:
                value_type_3_item: bool | float | str
                value_type_3_item = value_type_3_item_data
                value.append(value_type_3_item)


        else:
            value = self.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "field": field,
            "op": op,
        })
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field")

        op = ToolCallInputArgumentsForEachValuesType1FilterOp(d.pop("op"))




        def _parse_value(data: object) -> bool | float | list[bool | float | str] | str | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                value_type_3 = []
                _value_type_3 = data
                for value_type_3_item_data in (_value_type_3):
                    def _parse_value_type_3_item(data: object) -> bool | float | str:
                        return cast(bool | float | str, data)

                    value_type_3_item = _parse_value_type_3_item(value_type_3_item_data)

                    value_type_3.append(value_type_3_item)

                return value_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | float | list[bool | float | str] | str | Unset, data)

        value = _parse_value(d.pop("value", UNSET))


        tool_call_input_arguments_for_each_values_type_1_filter = cls(
            field=field,
            op=op,
            value=value,
        )


        tool_call_input_arguments_for_each_values_type_1_filter.additional_properties = d
        return tool_call_input_arguments_for_each_values_type_1_filter

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
