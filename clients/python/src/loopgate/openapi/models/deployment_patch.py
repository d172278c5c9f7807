from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.cache_mode import CacheMode
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="DeploymentPatch")



@_attrs_define
class DeploymentPatch:
    """ 
        Attributes:
            cache (CacheMode | None | Unset):
            name (None | str | Unset):
     """

    cache: CacheMode | None | Unset = UNSET
    name: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        cache: None | str | Unset
        if isinstance(self.cache, Unset):
            cache = UNSET
        elif isinstance(self.cache, CacheMode):
            cache = self.cache.value
        else:
            cache = self.cache

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if cache is not UNSET:
            field_dict["cache"] = cache
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_cache(data: object) -> CacheMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cache_type_0 = CacheMode(data)



                return cache_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CacheMode | None | Unset, data)

        cache = _parse_cache(d.pop("cache", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        deployment_patch = cls(
            cache=cache,
            name=name,
        )

        return deployment_patch

