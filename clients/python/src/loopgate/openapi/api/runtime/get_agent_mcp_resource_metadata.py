from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.get_agent_mcp_resource_metadata_response_200 import GetAgentMcpResourceMetadataResponse200
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    agent_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/.well-known/oauth-protected-resource/v1/agents/{agent_id}/mcp".format(agent_id=quote(str(agent_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> GetAgentMcpResourceMetadataResponse200 | Problem | None:
    if response.status_code == 200:
        response_200 = GetAgentMcpResourceMetadataResponse200.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[GetAgentMcpResourceMetadataResponse200 | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[GetAgentMcpResourceMetadataResponse200 | Problem]:
    """ The protected-resource metadata (RFC 9728) of an agent's MCP endpoint: the resource
    and how a token is presented (the `Authorization` header). loopgate issues its tokens
    itself (runtime tokens, org keys), so no authorization server is named.

     Public (no token): an MCP client reads it after a `401` from `POST
    /v1/agents/{agent_id}/mcp` to learn that a bearer token goes in the `Authorization` header.

    Args:
        agent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetAgentMcpResourceMetadataResponse200 | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    agent_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> GetAgentMcpResourceMetadataResponse200 | Problem | None:
    """ The protected-resource metadata (RFC 9728) of an agent's MCP endpoint: the resource
    and how a token is presented (the `Authorization` header). loopgate issues its tokens
    itself (runtime tokens, org keys), so no authorization server is named.

     Public (no token): an MCP client reads it after a `401` from `POST
    /v1/agents/{agent_id}/mcp` to learn that a bearer token goes in the `Authorization` header.

    Args:
        agent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetAgentMcpResourceMetadataResponse200 | Problem
     """


    return sync_detailed(
        agent_id=agent_id,
client=client,

    ).parsed

async def asyncio_detailed(
    agent_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[GetAgentMcpResourceMetadataResponse200 | Problem]:
    """ The protected-resource metadata (RFC 9728) of an agent's MCP endpoint: the resource
    and how a token is presented (the `Authorization` header). loopgate issues its tokens
    itself (runtime tokens, org keys), so no authorization server is named.

     Public (no token): an MCP client reads it after a `401` from `POST
    /v1/agents/{agent_id}/mcp` to learn that a bearer token goes in the `Authorization` header.

    Args:
        agent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[GetAgentMcpResourceMetadataResponse200 | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    agent_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> GetAgentMcpResourceMetadataResponse200 | Problem | None:
    """ The protected-resource metadata (RFC 9728) of an agent's MCP endpoint: the resource
    and how a token is presented (the `Authorization` header). loopgate issues its tokens
    itself (runtime tokens, org keys), so no authorization server is named.

     Public (no token): an MCP client reads it after a `401` from `POST
    /v1/agents/{agent_id}/mcp` to learn that a bearer token goes in the `Authorization` header.

    Args:
        agent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        GetAgentMcpResourceMetadataResponse200 | Problem
     """


    return (await asyncio_detailed(
        agent_id=agent_id,
client=client,

    )).parsed
