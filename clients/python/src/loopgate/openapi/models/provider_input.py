from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tool_kind import ToolKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.connection_input_type_0 import ConnectionInputType0
  from ..models.connection_input_type_1 import ConnectionInputType1
  from ..models.provider_auth import ProviderAuth
  from ..models.rate_limit import RateLimit





T = TypeVar("T", bound="ProviderInput")



@_attrs_define
class ProviderInput:
    """ 
        Attributes:
            auth (ProviderAuth):
            name (str):
            base_url (None | str | Unset): The API's base URL (kinds `api` and `app`).
            concurrency (int | None | Unset): P9: requests one walk keeps in flight at once against this provider, 1 to 32
                (default 4); the rate limit still spaces them. 1 walks one page at a time.
            connection (ConnectionInputType0 | ConnectionInputType1 | None | Unset):
            credential (None | str | Unset): The org-level secret; encrypted at rest, never returned.
            kind (ToolKind | Unset):
            propagate_trace_context (bool | Unset): Send the call's W3C trace context (`traceparent`, `tracestate`) with
                upstream
                requests, so the API's own traces join the call's (default false).
            rate_limit (None | RateLimit | Unset):
            toolkit (None | str | Unset): Kind `app`: the toolkit its tools belong to, `[A-Za-z0-9_-]{1,64}`, unique in the
                org.
            url (None | str | Unset): The MCP server's streamable HTTP endpoint (kind `mcp`).
            user_credentials_required (bool | Unset):
     """

    auth: ProviderAuth
    name: str
    base_url: None | str | Unset = UNSET
    concurrency: int | None | Unset = UNSET
    connection: ConnectionInputType0 | ConnectionInputType1 | None | Unset = UNSET
    credential: None | str | Unset = UNSET
    kind: ToolKind | Unset = UNSET
    propagate_trace_context: bool | Unset = UNSET
    rate_limit: None | RateLimit | Unset = UNSET
    toolkit: None | str | Unset = UNSET
    url: None | str | Unset = UNSET
    user_credentials_required: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.connection_input_type_0 import ConnectionInputType0 # noqa: PLC0415
        from ..models.connection_input_type_1 import ConnectionInputType1 # noqa: PLC0415
        from ..models.provider_auth import ProviderAuth # noqa: PLC0415
        from ..models.rate_limit import RateLimit # noqa: PLC0415
        auth = self.auth.to_dict()

        name = self.name

        base_url: None | str | Unset
        if isinstance(self.base_url, Unset):
            base_url = UNSET
        else:
            base_url = self.base_url

        concurrency: int | None | Unset
        if isinstance(self.concurrency, Unset):
            concurrency = UNSET
        else:
            concurrency = self.concurrency

        connection: dict[str, Any] | None | Unset
        if isinstance(self.connection, Unset):
            connection = UNSET
        elif isinstance(self.connection, ConnectionInputType0):
            connection = self.connection.to_dict()
        elif isinstance(self.connection, ConnectionInputType1):
            connection = self.connection.to_dict()
        else:
            connection = self.connection

        credential: None | str | Unset
        if isinstance(self.credential, Unset):
            credential = UNSET
        else:
            credential = self.credential

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value


        propagate_trace_context = self.propagate_trace_context

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

        user_credentials_required = self.user_credentials_required


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "auth": auth,
            "name": name,
        })
        if base_url is not UNSET:
            field_dict["base_url"] = base_url
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if connection is not UNSET:
            field_dict["connection"] = connection
        if credential is not UNSET:
            field_dict["credential"] = credential
        if kind is not UNSET:
            field_dict["kind"] = kind
        if propagate_trace_context is not UNSET:
            field_dict["propagate_trace_context"] = propagate_trace_context
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if toolkit is not UNSET:
            field_dict["toolkit"] = toolkit
        if url is not UNSET:
            field_dict["url"] = url
        if user_credentials_required is not UNSET:
            field_dict["user_credentials_required"] = user_credentials_required

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.connection_input_type_0 import ConnectionInputType0 # noqa: PLC0415
        from ..models.connection_input_type_1 import ConnectionInputType1 # noqa: PLC0415
        from ..models.provider_auth import ProviderAuth # noqa: PLC0415
        from ..models.rate_limit import RateLimit # noqa: PLC0415
        d = dict(src_dict)
        auth = ProviderAuth.from_dict(d.pop("auth"))




        name = d.pop("name")

        def _parse_base_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_url = _parse_base_url(d.pop("base_url", UNSET))


        def _parse_concurrency(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        concurrency = _parse_concurrency(d.pop("concurrency", UNSET))


        def _parse_connection(data: object) -> ConnectionInputType0 | ConnectionInputType1 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_connection_input_type_0 = ConnectionInputType0.from_dict(data)



                return componentsschemas_connection_input_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_connection_input_type_1 = ConnectionInputType1.from_dict(data)



                return componentsschemas_connection_input_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConnectionInputType0 | ConnectionInputType1 | None | Unset, data)

        connection = _parse_connection(d.pop("connection", UNSET))


        def _parse_credential(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        credential = _parse_credential(d.pop("credential", UNSET))


        _kind = d.pop("kind", UNSET)
        kind: ToolKind | Unset
        if isinstance(_kind,  Unset):
            kind = UNSET
        else:
            kind = ToolKind(_kind)




        propagate_trace_context = d.pop("propagate_trace_context", UNSET)

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


        user_credentials_required = d.pop("user_credentials_required", UNSET)

        provider_input = cls(
            auth=auth,
            name=name,
            base_url=base_url,
            concurrency=concurrency,
            connection=connection,
            credential=credential,
            kind=kind,
            propagate_trace_context=propagate_trace_context,
            rate_limit=rate_limit,
            toolkit=toolkit,
            url=url,
            user_credentials_required=user_credentials_required,
        )

        return provider_input

