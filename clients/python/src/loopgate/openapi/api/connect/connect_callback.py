from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    error: str | Unset = UNSET,
    iss: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["state"] = state

    params["code"] = code

    params["error"] = error

    params["iss"] = iss


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/connect/callback",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    error: str | Unset = UNSET,
    iss: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Where the authorization server sends the user back (OAuth 2.0 redirect URI).

     Public: the `state` parameter is the credential. On success the user's connection is stored
    and an HTML page says so; a state that is unknown, used or expired answers `404`.

    Args:
        state (str | Unset):
        code (str | Unset):
        error (str | Unset):
        iss (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        state=state,
code=code,
error=error,
iss=iss,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    error: str | Unset = UNSET,
    iss: str | Unset = UNSET,

) -> Problem | str | None:
    """ Where the authorization server sends the user back (OAuth 2.0 redirect URI).

     Public: the `state` parameter is the credential. On success the user's connection is stored
    and an HTML page says so; a state that is unknown, used or expired answers `404`.

    Args:
        state (str | Unset):
        code (str | Unset):
        error (str | Unset):
        iss (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        client=client,
state=state,
code=code,
error=error,
iss=iss,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    error: str | Unset = UNSET,
    iss: str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Where the authorization server sends the user back (OAuth 2.0 redirect URI).

     Public: the `state` parameter is the credential. On success the user's connection is stored
    and an HTML page says so; a state that is unknown, used or expired answers `404`.

    Args:
        state (str | Unset):
        code (str | Unset):
        error (str | Unset):
        iss (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        state=state,
code=code,
error=error,
iss=iss,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    code: str | Unset = UNSET,
    error: str | Unset = UNSET,
    iss: str | Unset = UNSET,

) -> Problem | str | None:
    """ Where the authorization server sends the user back (OAuth 2.0 redirect URI).

     Public: the `state` parameter is the credential. On success the user's connection is stored
    and an HTML page says so; a state that is unknown, used or expired answers `404`.

    Args:
        state (str | Unset):
        code (str | Unset):
        error (str | Unset):
        iss (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        client=client,
state=state,
code=code,
error=error,
iss=iss,

    )).parsed
