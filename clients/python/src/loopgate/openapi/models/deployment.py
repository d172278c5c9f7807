from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.cache_mode import CacheMode
from typing import cast
import datetime






T = TypeVar("T", bound="Deployment")



@_attrs_define
class Deployment:
    """ 
        Attributes:
            cache (CacheMode): `off`: never cache; `shadow`: record walks, never serve them; `on`: serve hits.
            created_at (datetime.datetime):
            id (str): `dep_…`
            name (str):
            org_id (str):
            updated_at (datetime.datetime):
     """

    cache: CacheMode
    created_at: datetime.datetime
    id: str
    name: str
    org_id: str
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        cache = self.cache.value

        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        org_id = self.org_id

        updated_at = self.updated_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cache": cache,
            "created_at": created_at,
            "id": id,
            "name": name,
            "org_id": org_id,
            "updated_at": updated_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cache = CacheMode(d.pop("cache"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        name = d.pop("name")

        org_id = d.pop("org_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        deployment = cls(
            cache=cache,
            created_at=created_at,
            id=id,
            name=name,
            org_id=org_id,
            updated_at=updated_at,
        )


        deployment.additional_properties = d
        return deployment

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
