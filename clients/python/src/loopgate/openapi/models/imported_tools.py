from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.tool import Tool





T = TypeVar("T", bound="ImportedTools")



@_attrs_define
class ImportedTools:
    """ The tools an import created.

        Attributes:
            data (list[Tool]):
            vectors_pending (int): D6: how many of these tools' search vectors are being computed in the background
                (0 when search runs without the embedding model). Until a tool's vector is ready
                `search_tools` ranks it by its words and says so.
     """

    data: list[Tool]
    vectors_pending: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool import Tool # noqa: PLC0415
        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)



        vectors_pending = self.vectors_pending


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "data": data,
            "vectors_pending": vectors_pending,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool import Tool # noqa: PLC0415
        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in (_data):
            data_item = Tool.from_dict(data_item_data)



            data.append(data_item)


        vectors_pending = d.pop("vectors_pending")

        imported_tools = cls(
            data=data,
            vectors_pending=vectors_pending,
        )


        imported_tools.additional_properties = d
        return imported_tools

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
