from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.post_agent_mcp_body import PostAgentMcpBody
from ...models.post_agent_mcp_response_200 import PostAgentMcpResponse200
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    agent_id: str,
    *,
    body: PostAgentMcpBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent_id}/mcp".format(agent_id=quote(str(agent_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | PostAgentMcpResponse200 | Problem | None:
    if response.status_code == 200:
        response_200 = PostAgentMcpResponse200.from_dict(response.json())



        return response_200

    if response.status_code == 202:
        response_202 = cast(Any, None)
        return response_202

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | PostAgentMcpResponse200 | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent_id: str,
    *,
    client: AuthenticatedClient,
    body: PostAgentMcpBody,

) -> Response[Any | PostAgentMcpResponse200 | Problem]:
    """ Send one JSON-RPC message (or, in a 2025-03-26 session, a batch) to the agent's MCP
    server.

     `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
    requests carry it, and one that names a session never issued, ended or expired is
    `404`. `tools/list` is the thread's `steps` answer; `tools/call` answers as an SSE
    stream (progress and `tools/list_changed` notifications, then the result) when the
    client accepts one, else as JSON. In a `2025-11-25` session a `tools/call` with `task`
    is answered at once with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
    `tasks/list` and `tasks/cancel` follow the task from any replica (M3). Notifications
    and responses get `202`.

    Args:
        agent_id (str):
        body (PostAgentMcpBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | PostAgentMcpResponse200 | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    agent_id: str,
    *,
    client: AuthenticatedClient,
    body: PostAgentMcpBody,

) -> Any | PostAgentMcpResponse200 | Problem | None:
    """ Send one JSON-RPC message (or, in a 2025-03-26 session, a batch) to the agent's MCP
    server.

     `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
    requests carry it, and one that names a session never issued, ended or expired is
    `404`. `tools/list` is the thread's `steps` answer; `tools/call` answers as an SSE
    stream (progress and `tools/list_changed` notifications, then the result) when the
    client accepts one, else as JSON. In a `2025-11-25` session a `tools/call` with `task`
    is answered at once with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
    `tasks/list` and `tasks/cancel` follow the task from any replica (M3). Notifications
    and responses get `202`.

    Args:
        agent_id (str):
        body (PostAgentMcpBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | PostAgentMcpResponse200 | Problem
     """


    return sync_detailed(
        agent_id=agent_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    agent_id: str,
    *,
    client: AuthenticatedClient,
    body: PostAgentMcpBody,

) -> Response[Any | PostAgentMcpResponse200 | Problem]:
    """ Send one JSON-RPC message (or, in a 2025-03-26 session, a batch) to the agent's MCP
    server.

     `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
    requests carry it, and one that names a session never issued, ended or expired is
    `404`. `tools/list` is the thread's `steps` answer; `tools/call` answers as an SSE
    stream (progress and `tools/list_changed` notifications, then the result) when the
    client accepts one, else as JSON. In a `2025-11-25` session a `tools/call` with `task`
    is answered at once with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
    `tasks/list` and `tasks/cancel` follow the task from any replica (M3). Notifications
    and responses get `202`.

    Args:
        agent_id (str):
        body (PostAgentMcpBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | PostAgentMcpResponse200 | Problem]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    agent_id: str,
    *,
    client: AuthenticatedClient,
    body: PostAgentMcpBody,

) -> Any | PostAgentMcpResponse200 | Problem | None:
    """ Send one JSON-RPC message (or, in a 2025-03-26 session, a batch) to the agent's MCP
    server.

     `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
    requests carry it, and one that names a session never issued, ended or expired is
    `404`. `tools/list` is the thread's `steps` answer; `tools/call` answers as an SSE
    stream (progress and `tools/list_changed` notifications, then the result) when the
    client accepts one, else as JSON. In a `2025-11-25` session a `tools/call` with `task`
    is answered at once with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
    `tasks/list` and `tasks/cancel` follow the task from any replica (M3). Notifications
    and responses get `202`.

    Args:
        agent_id (str):
        body (PostAgentMcpBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | PostAgentMcpResponse200 | Problem
     """


    return (await asyncio_detailed(
        agent_id=agent_id,
client=client,
body=body,

    )).parsed
