from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Binding")



@_attrs_define
class Binding:
    """ One tool bound to an agent.

        Attributes:
            provider_id (str):
            tool_id (str):
            dataset_ttl_hours (int | None | Unset): Overrides how long a cached complete walk stays fresh for this agent, in
                hours
                (1 to 8760).
            discovery (bool | None | Unset): `true`: always behind tool search; `false`: always offered directly; unset: by
                budget.
            loop_responses (bool | Unset): Walk pages, fan out, project and filter inside one call ("Allow response
                looping").
     """

    provider_id: str
    tool_id: str
    dataset_ttl_hours: int | None | Unset = UNSET
    discovery: bool | None | Unset = UNSET
    loop_responses: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        provider_id = self.provider_id

        tool_id = self.tool_id

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

        loop_responses = self.loop_responses


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "provider_id": provider_id,
            "tool_id": tool_id,
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
        provider_id = d.pop("provider_id")

        tool_id = d.pop("tool_id")

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


        loop_responses = d.pop("loop_responses", UNSET)

        binding = cls(
            provider_id=provider_id,
            tool_id=tool_id,
            dataset_ttl_hours=dataset_ttl_hours,
            discovery=discovery,
            loop_responses=loop_responses,
        )


        binding.additional_properties = d
        return binding

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
