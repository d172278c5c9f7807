from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.runtime_token_input_credentials import RuntimeTokenInputCredentials





T = TypeVar("T", bound="RuntimeTokenInput")



@_attrs_define
class RuntimeTokenInput:
    """ 
        Attributes:
            user_id (str): Your end user's id; threads and per-user credentials are scoped by it.
            agent_id (None | str | Unset): Limit the token to one agent.
            cache_scope (None | str | Unset): Share cached datasets across every user minted with the same scope (inside the
                org).
            credentials (RuntimeTokenInputCredentials | Unset): The user's own secrets by provider id (at most 100); sealed
                inside the token, never
                readable from it, and bound to the provider's origin and auth placement as they are
                now: should either change, the secret is not sent (`409 credential_required`).
            ttl_seconds (int | None | Unset): Lifetime, 60–86400 seconds (default 3600).
     """

    user_id: str
    agent_id: None | str | Unset = UNSET
    cache_scope: None | str | Unset = UNSET
    credentials: RuntimeTokenInputCredentials | Unset = UNSET
    ttl_seconds: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.runtime_token_input_credentials import RuntimeTokenInputCredentials # noqa: PLC0415
        user_id = self.user_id

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        else:
            agent_id = self.agent_id

        cache_scope: None | str | Unset
        if isinstance(self.cache_scope, Unset):
            cache_scope = UNSET
        else:
            cache_scope = self.cache_scope

        credentials: dict[str, Any] | Unset = UNSET
        if not isinstance(self.credentials, Unset):
            credentials = self.credentials.to_dict()

        ttl_seconds: int | None | Unset
        if isinstance(self.ttl_seconds, Unset):
            ttl_seconds = UNSET
        else:
            ttl_seconds = self.ttl_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "user_id": user_id,
        })
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if cache_scope is not UNSET:
            field_dict["cache_scope"] = cache_scope
        if credentials is not UNSET:
            field_dict["credentials"] = credentials
        if ttl_seconds is not UNSET:
            field_dict["ttl_seconds"] = ttl_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.runtime_token_input_credentials import RuntimeTokenInputCredentials # noqa: PLC0415
        d = dict(src_dict)
        user_id = d.pop("user_id")

        def _parse_agent_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))


        def _parse_cache_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cache_scope = _parse_cache_scope(d.pop("cache_scope", UNSET))


        _credentials = d.pop("credentials", UNSET)
        credentials: RuntimeTokenInputCredentials | Unset
        if isinstance(_credentials,  Unset):
            credentials = UNSET
        else:
            credentials = RuntimeTokenInputCredentials.from_dict(_credentials)




        def _parse_ttl_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        ttl_seconds = _parse_ttl_seconds(d.pop("ttl_seconds", UNSET))


        runtime_token_input = cls(
            user_id=user_id,
            agent_id=agent_id,
            cache_scope=cache_scope,
            credentials=credentials,
            ttl_seconds=ttl_seconds,
        )

        return runtime_token_input

