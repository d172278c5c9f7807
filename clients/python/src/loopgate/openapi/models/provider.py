from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tool_kind import ToolKind
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.connection import Connection
  from ..models.provider_auth import ProviderAuth
  from ..models.rate_limit import RateLimit





T = TypeVar("T", bound="Provider")



@_attrs_define
class Provider:
    """ 
        Attributes:
            auth (ProviderAuth):
            base_url (str): The API's base URL; for an MCP server, its streamable HTTP endpoint (= `url`).
            created_at (datetime.datetime):
            has_credential (bool): Whether an org-level credential is stored (it is never returned).
            id (str): `prv_…`
            kind (ToolKind):
            name (str):
            org_id (str):
            propagate_trace_context (bool): Whether upstream requests carry the call's W3C trace context (`traceparent`,
                `tracestate`), so the API's own traces join the call's (default false).
            updated_at (datetime.datetime):
            user_credentials_required (bool):
            concurrency (int | None | Unset): P9: requests one walk keeps in flight at once against this provider (1 to 32;
                absent: the default, 4). The rate limit still spaces them.
            connection (Connection | None | Unset):
            rate_limit (None | RateLimit | Unset):
            toolkit (None | str | Unset): Kind `app`: the toolkit its tools belong to (D2).
            url (None | str | Unset): The MCP endpoint, for kind `mcp` only.
     """

    auth: ProviderAuth
    base_url: str
    created_at: datetime.datetime
    has_credential: bool
    id: str
    kind: ToolKind
    name: str
    org_id: str
    propagate_trace_context: bool
    updated_at: datetime.datetime
    user_credentials_required: bool
    concurrency: int | None | Unset = UNSET
    connection: Connection | None | Unset = UNSET
    rate_limit: None | RateLimit | Unset = UNSET
    toolkit: None | str | Unset = UNSET
    url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.connection import Connection # noqa: PLC0415
        from ..models.provider_auth import ProviderAuth # noqa: PLC0415
        from ..models.rate_limit import RateLimit # noqa: PLC0415
        auth = self.auth.to_dict()

        base_url = self.base_url

        created_at = self.created_at.isoformat()

        has_credential = self.has_credential

        id = self.id

        kind = self.kind.value

        name = self.name

        org_id = self.org_id

        propagate_trace_context = self.propagate_trace_context

        updated_at = self.updated_at.isoformat()

        user_credentials_required = self.user_credentials_required

        concurrency: int | None | Unset
        if isinstance(self.concurrency, Unset):
            concurrency = UNSET
        else:
            concurrency = self.concurrency

        connection: dict[str, Any] | None | Unset
        if isinstance(self.connection, Unset):
            connection = UNSET
        elif isinstance(self.connection, Connection):
            connection = self.connection.to_dict()
        else:
            connection = self.connection

        rate_limit: dict[str, Any] | None | Unset
        if isinstance(self.rate_limit, Unset):
            rate_limit = UNSET
        elif isinstance(self.rate_limit, RateLimit):
            rate_limit = self.rate_limit.to_dict()
        else:
            rate_limit = self.rate_limit

        toolkit: None | str | Unset
        if isinstance(self.toolkit, Unset):
            toolkit = UNSET
        else:
            toolkit = self.toolkit

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "auth": auth,
            "base_url": base_url,
            "created_at": created_at,
            "has_credential": has_credential,
            "id": id,
            "kind": kind,
            "name": name,
            "org_id": org_id,
            "propagate_trace_context": propagate_trace_context,
            "updated_at": updated_at,
            "user_credentials_required": user_credentials_required,
        })
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if connection is not UNSET:
            field_dict["connection"] = connection
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.connection import Connection # noqa: PLC0415
        from ..models.provider_auth import ProviderAuth # noqa: PLC0415
        from ..models.rate_limit import RateLimit # noqa: PLC0415
        d = dict(src_dict)
        auth = ProviderAuth.from_dict(d.pop("auth"))




        base_url = d.pop("base_url")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        has_credential = d.pop("has_credential")

        id = d.pop("id")

        kind = ToolKind(d.pop("kind"))




        name = d.pop("name")

        org_id = d.pop("org_id")

        propagate_trace_context = d.pop("propagate_trace_context")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        user_credentials_required = d.pop("user_credentials_required")

        def _parse_concurrency(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        concurrency = _parse_concurrency(d.pop("concurrency", UNSET))


        def _parse_connection(data: object) -> Connection | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                connection_type_0 = Connection.from_dict(data)



                return connection_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Connection | None | Unset, data)

        connection = _parse_connection(d.pop("connection", UNSET))


        def _parse_rate_limit(data: object) -> None | RateLimit | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rate_limit_type_0 = RateLimit.from_dict(data)



                return rate_limit_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RateLimit | Unset, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit", UNSET))


        def _parse_toolkit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        toolkit = _parse_toolkit(d.pop("toolkit", UNSET))


        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))


        provider = cls(
            auth=auth,
            base_url=base_url,
            created_at=created_at,
            has_credential=has_credential,
            id=id,
            kind=kind,
            name=name,
            org_id=org_id,
            propagate_trace_context=propagate_trace_context,
            updated_at=updated_at,
            user_credentials_required=user_credentials_required,
            concurrency=concurrency,
            connection=connection,
            rate_limit=rate_limit,
            toolkit=toolkit,
            url=url,
        )


        provider.additional_properties = d
        return provider

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
