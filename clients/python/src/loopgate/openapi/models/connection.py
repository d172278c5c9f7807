from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Connection")



@_attrs_define
class Connection:
    """ A connection as the customer backend sees it (never a secret).

        Attributes:
            broken (bool): A refresh failed: the user must connect again.
            connected_at (datetime.datetime):
            id (str): `con_…`
            toolkit (str):
            user_id (str):
            expires_at (datetime.datetime | None | Unset): When the current access token expires (OAuth); it is refreshed
                before then.
            refresh (None | str | Unset): OAuth: `available` when the authorization server granted a refresh token, `none`
                when it did not (the connection stops working when its access token expires: ask
                for offline access, e.g. `authorization_params` `prompt=consent` or
                `access_type=offline`). Absent for an API key. Example: available.
     """

    broken: bool
    connected_at: datetime.datetime
    id: str
    toolkit: str
    user_id: str
    expires_at: datetime.datetime | None | Unset = UNSET
    refresh: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        broken = self.broken

        connected_at = self.connected_at.isoformat()

        id = self.id

        toolkit = self.toolkit

        user_id = self.user_id

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        refresh: None | str | Unset
        if isinstance(self.refresh, Unset):
            refresh = UNSET
        else:
            refresh = self.refresh


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "broken": broken,
            "connected_at": connected_at,
            "id": id,
            "toolkit": toolkit,
            "user_id": user_id,
        })
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if refresh is not UNSET:
            field_dict["refresh"] = refresh

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        broken = d.pop("broken")

        connected_at = datetime.datetime.fromisoformat(d.pop("connected_at"))




        id = d.pop("id")

        toolkit = d.pop("toolkit")

        user_id = d.pop("user_id")

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)



                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))


        def _parse_refresh(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        refresh = _parse_refresh(d.pop("refresh", UNSET))


        connection = cls(
            broken=broken,
            connected_at=connected_at,
            id=id,
            toolkit=toolkit,
            user_id=user_id,
            expires_at=expires_at,
            refresh=refresh,
        )


        connection.additional_properties = d
        return connection

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
