from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.provider import Provider
from ...models.provider_patch import ProviderPatch
from typing import cast



def _get_kwargs(
    provider_id: str,
    *,
    body: ProviderPatch,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/providers/{provider_id}".format(provider_id=quote(str(provider_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | Provider | None:
    if response.status_code == 200:
        response_200 = Provider.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | Provider]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    body: ProviderPatch,

) -> Response[Problem | Provider]:
    """ Update a provider; absent fields stay as they are.

     A new `credential` replaces the stored one; cached walks fetched with the old one are never
    read again (LOOP_ENGINE C2). Answers `200`.

    Args:
        provider_id (str):
        body (ProviderPatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Provider]
     """


    kwargs = _get_kwargs(
        provider_id=provider_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    body: ProviderPatch,

) -> Problem | Provider | None:
    """ Update a provider; absent fields stay as they are.

     A new `credential` replaces the stored one; cached walks fetched with the old one are never
    read again (LOOP_ENGINE C2). Answers `200`.

    Args:
        provider_id (str):
        body (ProviderPatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Provider
     """


    return sync_detailed(
        provider_id=provider_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    body: ProviderPatch,

) -> Response[Problem | Provider]:
    """ Update a provider; absent fields stay as they are.

     A new `credential` replaces the stored one; cached walks fetched with the old one are never
    read again (LOOP_ENGINE C2). Answers `200`.

    Args:
        provider_id (str):
        body (ProviderPatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Provider]
     """


    kwargs = _get_kwargs(
        provider_id=provider_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    body: ProviderPatch,

) -> Problem | Provider | None:
    """ Update a provider; absent fields stay as they are.

     A new `credential` replaces the stored one; cached walks fetched with the old one are never
    read again (LOOP_ENGINE C2). Answers `200`.

    Args:
        provider_id (str):
        body (ProviderPatch):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Provider
     """


    return (await asyncio_detailed(
        provider_id=provider_id,
client=client,
body=body,

    )).parsed
