from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="BindingInput")



@_attrs_define
class BindingInput:
    """ 
        Attributes:
            dataset_ttl_hours (int | None | Unset): Hours, 1–8760, or `null` for the default TTL.
            discovery (bool | None | Unset):
            loop_responses (bool | None | Unset):
     """

    dataset_ttl_hours: int | None | Unset = UNSET
    discovery: bool | None | Unset = UNSET
    loop_responses: bool | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dataset_ttl_hours: int | None | Unset
        if isinstance(self.dataset_ttl_hours, Unset):
            dataset_ttl_hours = UNSET
        else:
            dataset_ttl_hours = self.dataset_ttl_hours

        discovery: bool | None | Unset
        if isinstance(self.discovery, Unset):
            discovery = UNSET
        else:
            discovery = self.discovery

        loop_responses: bool | None | Unset
        if isinstance(self.loop_responses, Unset):
            loop_responses = UNSET
        else:
            loop_responses = self.loop_responses


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dataset_ttl_hours is not UNSET:
            field_dict["dataset_ttl_hours"] = dataset_ttl_hours
        if discovery is not UNSET:
            field_dict["discovery"] = discovery
        if loop_responses is not UNSET:
            field_dict["loop_responses"] = loop_responses

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_dataset_ttl_hours(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        dataset_ttl_hours = _parse_dataset_ttl_hours(d.pop("dataset_ttl_hours", UNSET))


        def _parse_discovery(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        discovery = _parse_discovery(d.pop("discovery", UNSET))


        def _parse_loop_responses(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        loop_responses = _parse_loop_responses(d.pop("loop_responses", UNSET))


        binding_input = cls(
            dataset_ttl_hours=dataset_ttl_hours,
            discovery=discovery,
            loop_responses=loop_responses,
        )

        return binding_input

