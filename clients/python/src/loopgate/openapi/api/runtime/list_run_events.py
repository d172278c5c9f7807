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
    workflow_id: str,
    run_id: str,
    *,
    last_event_id: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow_id}/runs/{run_id}/events".format(workflow_id=quote(str(workflow_id), safe=""),run_id=quote(str(run_id), safe=""),),
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
    workflow_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow a workflow run's UI-message stream (same caller, any replica).

     As for tool calls: what the run has streamed so far and then live chunks until
    `finish` and `[DONE]`, or at once the recorded step outputs when it has finished.

    Args:
        workflow_id (str):
        run_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
run_id=run_id,
last_event_id=last_event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    workflow_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow a workflow run's UI-message stream (same caller, any replica).

     As for tool calls: what the run has streamed so far and then live chunks until
    `finish` and `[DONE]`, or at once the recorded step outputs when it has finished.

    Args:
        workflow_id (str):
        run_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return sync_detailed(
        workflow_id=workflow_id,
run_id=run_id,
client=client,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    workflow_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Response[Problem | str]:
    """ Follow a workflow run's UI-message stream (same caller, any replica).

     As for tool calls: what the run has streamed so far and then live chunks until
    `finish` and `[DONE]`, or at once the recorded step outputs when it has finished.

    Args:
        workflow_id (str):
        run_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
run_id=run_id,
last_event_id=last_event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    workflow_id: str,
    run_id: str,
    *,
    client: AuthenticatedClient,
    last_event_id: None | str | Unset = UNSET,

) -> Problem | str | None:
    """ Follow a workflow run's UI-message stream (same caller, any replica).

     As for tool calls: what the run has streamed so far and then live chunks until
    `finish` and `[DONE]`, or at once the recorded step outputs when it has finished.

    Args:
        workflow_id (str):
        run_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
     """


    return (await asyncio_detailed(
        workflow_id=workflow_id,
run_id=run_id,
client=client,
last_event_id=last_event_id,

    )).parsed
