from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.skipped import Skipped
  from ..models.tool import Tool





T = TypeVar("T", bound="SyncReport")



@_attrs_define
class SyncReport:
    """ The provider's tools after the sync, and what changed.

        Attributes:
            added (list[str]):
            removed (list[str]):
            unchanged (int):
            updated (list[str]):
            data (list[Tool]):
            skipped (list[Skipped]):
     """

    added: list[str]
    removed: list[str]
    unchanged: int
    updated: list[str]
    data: list[Tool]
    skipped: list[Skipped]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.skipped import Skipped # noqa: PLC0415
        from ..models.tool import Tool # noqa: PLC0415
        added = self.added



        removed = self.removed



        unchanged = self.unchanged

        updated = self.updated



        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)



        skipped = []
        for skipped_item_data in self.skipped:
            skipped_item = skipped_item_data.to_dict()
            skipped.append(skipped_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "added": added,
            "removed": removed,
            "unchanged": unchanged,
            "updated": updated,
            "data": data,
            "skipped": skipped,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.skipped import Skipped # noqa: PLC0415
        from ..models.tool import Tool # noqa: PLC0415
        d = dict(src_dict)
        added = cast(list[str], d.pop("added"))


        removed = cast(list[str], d.pop("removed"))


        unchanged = d.pop("unchanged")

        updated = cast(list[str], d.pop("updated"))


        data = []
        _data = d.pop("data")
        for data_item_data in (_data):
            data_item = Tool.from_dict(data_item_data)



            data.append(data_item)


        skipped = []
        _skipped = d.pop("skipped")
        for skipped_item_data in (_skipped):
            skipped_item = Skipped.from_dict(skipped_item_data)



            skipped.append(skipped_item)


        sync_report = cls(
            added=added,
            removed=removed,
            unchanged=unchanged,
            updated=updated,
            data=data,
            skipped=skipped,
        )


        sync_report.additional_properties = d
        return sync_report

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
