from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.tool_call_input import ToolCallInput
from ...models.tool_call_response import ToolCallResponse
from typing import cast



def _get_kwargs(
    agent_id: str,
    thread_id: str,
    *,
    body: ToolCallInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls".format(agent_id=quote(str(agent_id), safe=""),thread_id=quote(str(thread_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ToolCallResponse | None:
    if response.status_code == 200:
        response_200 = ToolCallResponse.from_dict(response.json())



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

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())



        return response_410

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 502:
        response_502 = Problem.from_dict(response.json())



        return response_502

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ToolCallResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent_id: str,
    thread_id: str,
    *,
    client: AuthenticatedClient,
    body: ToolCallInput,

) -> Response[Problem | ToolCallResponse]:
    """ Execute a tool call in a thread.

     With `Accept: text/event-stream` the call streams the AI SDK UI-message stream (v1):
    start, start-step, tool-input-available, data-tool-loop-progress (at most one per
    750 ms), tool-output-available or tool-output-error, finish-step, finish, [DONE].
    The call runs to its end even if the client leaves; read it back with GET /v1/tool-calls/{id}.

    Values by reference (E6): `_for_each.values` (or any array or scalar argument) may be
    `{"fromResult": "res_…", "path": "id", "filter": {…}}`, read server-side from the thread's
    own stored result, so an agent never copies ids out of one result into the next call.
    A fan-out by reference walks 50 values a call; when values are left the envelope says
    `_stoppedBy: "values"`, counts them in `_forEachValues: {total, done, left}` and carries
    a `_continue` that walks the next ones into the same `_resultId`.

    Args:
        agent_id (str):
        thread_id (str):
        body (ToolCallInput): `POST …/tool-calls` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolCallResponse]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
thread_id=thread_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    agent_id: str,
    thread_id: str,
    *,
    client: AuthenticatedClient,
    body: ToolCallInput,

) -> Problem | ToolCallResponse | None:
    """ Execute a tool call in a thread.

     With `Accept: text/event-stream` the call streams the AI SDK UI-message stream (v1):
    start, start-step, tool-input-available, data-tool-loop-progress (at most one per
    750 ms), tool-output-available or tool-output-error, finish-step, finish, [DONE].
    The call runs to its end even if the client leaves; read it back with GET /v1/tool-calls/{id}.

    Values by reference (E6): `_for_each.values` (or any array or scalar argument) may be
    `{"fromResult": "res_…", "path": "id", "filter": {…}}`, read server-side from the thread's
    own stored result, so an agent never copies ids out of one result into the next call.
    A fan-out by reference walks 50 values a call; when values are left the envelope says
    `_stoppedBy: "values"`, counts them in `_forEachValues: {total, done, left}` and carries
    a `_continue` that walks the next ones into the same `_resultId`.

    Args:
        agent_id (str):
        thread_id (str):
        body (ToolCallInput): `POST …/tool-calls` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolCallResponse
     """


    return sync_detailed(
        agent_id=agent_id,
thread_id=thread_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    agent_id: str,
    thread_id: str,
    *,
    client: AuthenticatedClient,
    body: ToolCallInput,

) -> Response[Problem | ToolCallResponse]:
    """ Execute a tool call in a thread.

     With `Accept: text/event-stream` the call streams the AI SDK UI-message stream (v1):
    start, start-step, tool-input-available, data-tool-loop-progress (at most one per
    750 ms), tool-output-available or tool-output-error, finish-step, finish, [DONE].
    The call runs to its end even if the client leaves; read it back with GET /v1/tool-calls/{id}.

    Values by reference (E6): `_for_each.values` (or any array or scalar argument) may be
    `{"fromResult": "res_…", "path": "id", "filter": {…}}`, read server-side from the thread's
    own stored result, so an agent never copies ids out of one result into the next call.
    A fan-out by reference walks 50 values a call; when values are left the envelope says
    `_stoppedBy: "values"`, counts them in `_forEachValues: {total, done, left}` and carries
    a `_continue` that walks the next ones into the same `_resultId`.

    Args:
        agent_id (str):
        thread_id (str):
        body (ToolCallInput): `POST …/tool-calls` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolCallResponse]
     """


    kwargs = _get_kwargs(
        agent_id=agent_id,
thread_id=thread_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    agent_id: str,
    thread_id: str,
    *,
    client: AuthenticatedClient,
    body: ToolCallInput,

) -> Problem | ToolCallResponse | None:
    """ Execute a tool call in a thread.

     With `Accept: text/event-stream` the call streams the AI SDK UI-message stream (v1):
    start, start-step, tool-input-available, data-tool-loop-progress (at most one per
    750 ms), tool-output-available or tool-output-error, finish-step, finish, [DONE].
    The call runs to its end even if the client leaves; read it back with GET /v1/tool-calls/{id}.

    Values by reference (E6): `_for_each.values` (or any array or scalar argument) may be
    `{"fromResult": "res_…", "path": "id", "filter": {…}}`, read server-side from the thread's
    own stored result, so an agent never copies ids out of one result into the next call.
    A fan-out by reference walks 50 values a call; when values are left the envelope says
    `_stoppedBy: "values"`, counts them in `_forEachValues: {total, done, left}` and carries
    a `_continue` that walks the next ones into the same `_resultId`.

    Args:
        agent_id (str):
        thread_id (str):
        body (ToolCallInput): `POST …/tool-calls` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolCallResponse
     """


    return (await asyncio_detailed(
        agent_id=agent_id,
thread_id=thread_id,
client=client,
body=body,

    )).parsed
