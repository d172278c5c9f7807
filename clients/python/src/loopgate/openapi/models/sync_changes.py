from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="SyncChanges")



@_attrs_define
class SyncChanges:
    """ What a sync changed, by tool name.

        Attributes:
            added (list[str]):
            removed (list[str]):
            unchanged (int):
            updated (list[str]):
     """

    added: list[str]
    removed: list[str]
    unchanged: int
    updated: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        added = self.added



        removed = self.removed



        unchanged = self.unchanged

        updated = self.updated




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "added": added,
            "removed": removed,
            "unchanged": unchanged,
            "updated": updated,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        added = cast(list[str], d.pop("added"))


        removed = cast(list[str], d.pop("removed"))


        unchanged = d.pop("unchanged")

        updated = cast(list[str], d.pop("updated"))


        sync_changes = cls(
            added=added,
            removed=removed,
            unchanged=unchanged,
            updated=updated,
        )


        sync_changes.additional_properties = d
        return sync_changes

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
