from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.tool_call_input_arguments_for_each_values_type_1 import ToolCallInputArgumentsForEachValuesType1





T = TypeVar("T", bound="ToolCallInputArgumentsForEach")



@_attrs_define
class ToolCallInputArgumentsForEach:
    """ Call the tool once per value of its parameter `key` and merge the rows, each tagged with its value (E1); at most 50
    distinct values (E2); a `key` that is not a parameter is `400 invalid_for_each_key` (E3); per-value failures go to
    `_forEachErrors` (E4).

        Attributes:
            key (str): The parameter to vary.
            values (list[bool | float | str] | ToolCallInputArgumentsForEachValuesType1): The values, one call each (at most
                500 sent, 50 distinct), or a reference to a stored result's rows.
     """

    key: str
    values: list[bool | float | str] | ToolCallInputArgumentsForEachValuesType1
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_call_input_arguments_for_each_values_type_1 import ToolCallInputArgumentsForEachValuesType1 # noqa: PLC0415
        key = self.key

        values: dict[str, Any] | list[bool | float | str]
        if isinstance(self.values, list):
            values = []
            for values_type_0_item_data in self.values:
                values_type_0_item: bool | float | str
                values_type_0_item = values_type_0_item_data
                values.append(values_type_0_item)


        else:
            values = self.values.to_dict()



        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "key": key,
            "values": values,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_call_input_arguments_for_each_values_type_1 import ToolCallInputArgumentsForEachValuesType1 # noqa: PLC0415
        d = dict(src_dict)
        key = d.pop("key")

        def _parse_values(data: object) -> list[bool | float | str] | ToolCallInputArgumentsForEachValuesType1:
            try:
                if not isinstance(data, list):
                    raise TypeError()
                values_type_0 = []
                _values_type_0 = data
                for values_type_0_item_data in (_values_type_0):
                    def _parse_values_type_0_item(data: object) -> bool | float | str:
                        return cast(bool | float | str, data)

                    values_type_0_item = _parse_values_type_0_item(values_type_0_item_data)

                    values_type_0.append(values_type_0_item)

                return values_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            values_type_1 = ToolCallInputArgumentsForEachValuesType1.from_dict(data)



            return values_type_1

        values = _parse_values(d.pop("values"))


        tool_call_input_arguments_for_each = cls(
            key=key,
            values=values,
        )


        tool_call_input_arguments_for_each.additional_properties = d
        return tool_call_input_arguments_for_each

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
