from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.list_response_agent_data_item import ListResponseAgentDataItem





T = TypeVar("T", bound="ListResponseAgent")



@_attrs_define
class ListResponseAgent:
    """ One page of a list, newest first.

        Attributes:
            data (list[ListResponseAgentDataItem]):
            has_more (bool): `true` when more rows follow: pass `cursor` back to get them.
            cursor (None | str | Unset): Opaque, URL-safe; `null` on the last page.
            total (int | None | Unset): How many rows the whole list holds; only on the first page.
     """

    data: list[ListResponseAgentDataItem]
    has_more: bool
    cursor: None | str | Unset = UNSET
    total: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.list_response_agent_data_item import ListResponseAgentDataItem # noqa: PLC0415
        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)



        has_more = self.has_more

        cursor: None | str | Unset
        if isinstance(self.cursor, Unset):
            cursor = UNSET
        else:
            cursor = self.cursor

        total: int | None | Unset
        if isinstance(self.total, Unset):
            total = UNSET
        else:
            total = self.total


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "data": data,
            "has_more": has_more,
        })
        if cursor is not UNSET:
            field_dict["cursor"] = cursor
        if total is not UNSET:
            field_dict["total"] = total

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.list_response_agent_data_item import ListResponseAgentDataItem # noqa: PLC0415
        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in (_data):
            data_item = ListResponseAgentDataItem.from_dict(data_item_data)



            data.append(data_item)


        has_more = d.pop("has_more")

        def _parse_cursor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cursor = _parse_cursor(d.pop("cursor", UNSET))


        def _parse_total(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        total = _parse_total(d.pop("total", UNSET))


        list_response_agent = cls(
            data=data,
            has_more=has_more,
            cursor=cursor,
            total=total,
        )


        list_response_agent.additional_properties = d
        return list_response_agent

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
