from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.connection_input_type_0_type import ConnectionInputType0Type
from ..models.token_auth_method import TokenAuthMethod
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.authorization_params import AuthorizationParams





T = TypeVar("T", bound="ConnectionInputType0")



@_attrs_define
class ConnectionInputType0:
    """ OAuth 2.0 authorization code with PKCE and `state`: `issuer` alone (its endpoints
    discovered from its metadata), or `authorize_url` and `token_url`, or both.

        Attributes:
            client_id (str):
            type_ (ConnectionInputType0Type):
            authorization_params (AuthorizationParams | Unset): Extra authorization request parameters by name (at most 20,
                names of 1 to 100
                characters, values of at most 1000). The schema of `authorization_params`, named so
                that client generators make one model of it.
            authorize_url (None | str | Unset):
            client_secret (None | str | Unset): Encrypted at rest, never returned.
            issuer (None | str | Unset):
            revocation_url (None | str | Unset):
            scopes (list[str] | Unset):
            token_endpoint_auth_method (None | TokenAuthMethod | Unset):
            token_url (None | str | Unset):
     """

    client_id: str
    type_: ConnectionInputType0Type
    authorization_params: AuthorizationParams | Unset = UNSET
    authorize_url: None | str | Unset = UNSET
    client_secret: None | str | Unset = UNSET
    issuer: None | str | Unset = UNSET
    revocation_url: None | str | Unset = UNSET
    scopes: list[str] | Unset = UNSET
    token_endpoint_auth_method: None | TokenAuthMethod | Unset = UNSET
    token_url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.authorization_params import AuthorizationParams # noqa: PLC0415
        client_id = self.client_id

        type_ = self.type_.value

        authorization_params: dict[str, Any] | Unset = UNSET
        if not isinstance(self.authorization_params, Unset):
            authorization_params = self.authorization_params.to_dict()

        authorize_url: None | str | Unset
        if isinstance(self.authorize_url, Unset):
            authorize_url = UNSET
        else:
            authorize_url = self.authorize_url

        client_secret: None | str | Unset
        if isinstance(self.client_secret, Unset):
            client_secret = UNSET
        else:
            client_secret = self.client_secret

        issuer: None | str | Unset
        if isinstance(self.issuer, Unset):
            issuer = UNSET
        else:
            issuer = self.issuer

        revocation_url: None | str | Unset
        if isinstance(self.revocation_url, Unset):
            revocation_url = UNSET
        else:
            revocation_url = self.revocation_url

        scopes: list[str] | Unset = UNSET
        if not isinstance(self.scopes, Unset):
            scopes = self.scopes



        token_endpoint_auth_method: None | str | Unset
        if isinstance(self.token_endpoint_auth_method, Unset):
            token_endpoint_auth_method = UNSET
        elif isinstance(self.token_endpoint_auth_method, TokenAuthMethod):
            token_endpoint_auth_method = self.token_endpoint_auth_method.value
        else:
            token_endpoint_auth_method = self.token_endpoint_auth_method

        token_url: None | str | Unset
        if isinstance(self.token_url, Unset):
            token_url = UNSET
        else:
            token_url = self.token_url


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "client_id": client_id,
            "type": type_,
        })
        if authorization_params is not UNSET:
            field_dict["authorization_params"] = authorization_params
        if authorize_url is not UNSET:
            field_dict["authorize_url"] = authorize_url
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if issuer is not UNSET:
            field_dict["issuer"] = issuer
        if revocation_url is not UNSET:
            field_dict["revocation_url"] = revocation_url
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if token_endpoint_auth_method is not UNSET:
            field_dict["token_endpoint_auth_method"] = token_endpoint_auth_method
        if token_url is not UNSET:
            field_dict["token_url"] = token_url

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.authorization_params import AuthorizationParams # noqa: PLC0415
        d = dict(src_dict)
        client_id = d.pop("client_id")

        type_ = ConnectionInputType0Type(d.pop("type"))




        _authorization_params = d.pop("authorization_params", UNSET)
        authorization_params: AuthorizationParams | Unset
        if isinstance(_authorization_params,  Unset):
            authorization_params = UNSET
        else:
            authorization_params = AuthorizationParams.from_dict(_authorization_params)




        def _parse_authorize_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        authorize_url = _parse_authorize_url(d.pop("authorize_url", UNSET))


        def _parse_client_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_secret = _parse_client_secret(d.pop("client_secret", UNSET))


        def _parse_issuer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        issuer = _parse_issuer(d.pop("issuer", UNSET))


        def _parse_revocation_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        revocation_url = _parse_revocation_url(d.pop("revocation_url", UNSET))


        scopes = cast(list[str], d.pop("scopes", UNSET))


        def _parse_token_endpoint_auth_method(data: object) -> None | TokenAuthMethod | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                token_endpoint_auth_method_type_0 = TokenAuthMethod(data)



                return token_endpoint_auth_method_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TokenAuthMethod | Unset, data)

        token_endpoint_auth_method = _parse_token_endpoint_auth_method(d.pop("token_endpoint_auth_method", UNSET))


        def _parse_token_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        token_url = _parse_token_url(d.pop("token_url", UNSET))


        connection_input_type_0 = cls(
            client_id=client_id,
            type_=type_,
            authorization_params=authorization_params,
            authorize_url=authorize_url,
            client_secret=client_secret,
            issuer=issuer,
            revocation_url=revocation_url,
            scopes=scopes,
            token_endpoint_auth_method=token_endpoint_auth_method,
            token_url=token_url,
        )


        connection_input_type_0.additional_properties = d
        return connection_input_type_0

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
