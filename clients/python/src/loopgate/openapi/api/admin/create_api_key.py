from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.api_key_input import ApiKeyInput
from ...models.created_api_key import CreatedApiKey
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    org_id: str,
    *,
    body: ApiKeyInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org_id}/api-keys".format(org_id=quote(str(org_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CreatedApiKey | Problem | None:
    if response.status_code == 201:
        response_201 = CreatedApiKey.from_dict(response.json())



        return response_201

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CreatedApiKey | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org_id: str,
    *,
    client: AuthenticatedClient,
    body: ApiKeyInput,

) -> Response[CreatedApiKey | Problem]:
    """ Create an API key for an org.

     Admin token only. The secret (`key`, `lgk_…`) is in this answer and never again; `scopes`
    name what it may do (`studio` configuration, `mint` runtime tokens and connections,
    `runtime` tool calls). Answers `201`.

    Args:
        org_id (str):
        body (ApiKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedApiKey | Problem]
     """


    kwargs = _get_kwargs(
        org_id=org_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    org_id: str,
    *,
    client: AuthenticatedClient,
    body: ApiKeyInput,

) -> CreatedApiKey | Problem | None:
    """ Create an API key for an org.

     Admin token only. The secret (`key`, `lgk_…`) is in this answer and never again; `scopes`
    name what it may do (`studio` configuration, `mint` runtime tokens and connections,
    `runtime` tool calls). Answers `201`.

    Args:
        org_id (str):
        body (ApiKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedApiKey | Problem
     """


    return sync_detailed(
        org_id=org_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    org_id: str,
    *,
    client: AuthenticatedClient,
    body: ApiKeyInput,

) -> Response[CreatedApiKey | Problem]:
    """ Create an API key for an org.

     Admin token only. The secret (`key`, `lgk_…`) is in this answer and never again; `scopes`
    name what it may do (`studio` configuration, `mint` runtime tokens and connections,
    `runtime` tool calls). Answers `201`.

    Args:
        org_id (str):
        body (ApiKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedApiKey | Problem]
     """


    kwargs = _get_kwargs(
        org_id=org_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    org_id: str,
    *,
    client: AuthenticatedClient,
    body: ApiKeyInput,

) -> CreatedApiKey | Problem | None:
    """ Create an API key for an org.

     Admin token only. The secret (`key`, `lgk_…`) is in this answer and never again; `scopes`
    name what it may do (`studio` configuration, `mint` runtime tokens and connections,
    `runtime` tool calls). Answers `201`.

    Args:
        org_id (str):
        body (ApiKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedApiKey | Problem
     """


    return (await asyncio_detailed(
        org_id=org_id,
client=client,
body=body,

    )).parsed
