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
    call_id: str,
    *,
    last_event_id: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/tool-calls/{call_id}/events".format(call_id=quote(str(call_id), safe=""),),
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow a tool call's UI-message stream (same caller, any replica).

     While the call runs: its chunks so far (from after `Last-Event-ID` when sent), then
    live ones — progress at most once per 750 ms — until `finish` and `[DONE]`. Once it has
    finished: its outcome at once (`tool-output-available` or `tool-output-error`). Each
    buffered chunk carries an SSE `id` to reconnect with.

    Args:
        call_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        call_id=call_id,
last_event_id=last_event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    call_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow a tool call's UI-message stream (same caller, any replica).

     While the call runs: its chunks so far (from after `Last-Event-ID` when sent), then
    live ones — progress at most once per 750 ms — until `finish` and `[DONE]`. Once it has
    finished: its outcome at once (`tool-output-available` or `tool-output-error`). Each
    buffered chunk carries an SSE `id` to reconnect with.

    Args:
        call_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        call_id=call_id,
client=client,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow a tool call's UI-message stream (same caller, any replica).

     While the call runs: its chunks so far (from after `Last-Event-ID` when sent), then
    live ones — progress at most once per 750 ms — until `finish` and `[DONE]`. Once it has
    finished: its outcome at once (`tool-output-available` or `tool-output-error`). Each
    buffered chunk carries an SSE `id` to reconnect with.

    Args:
        call_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        call_id=call_id,
last_event_id=last_event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    call_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow a tool call's UI-message stream (same caller, any replica).

     While the call runs: its chunks so far (from after `Last-Event-ID` when sent), then
    live ones — progress at most once per 750 ms — until `finish` and `[DONE]`. Once it has
    finished: its outcome at once (`tool-output-available` or `tool-output-error`). Each
    buffered chunk carries an SSE `id` to reconnect with.

    Args:
        call_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        call_id=call_id,
client=client,
last_event_id=last_event_id,

    )).parsed
