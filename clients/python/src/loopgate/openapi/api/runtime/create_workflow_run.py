from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.run_input import RunInput
from ...models.workflow_run import WorkflowRun
from typing import cast



def _get_kwargs(
    workflow_id: str,
    *,
    body: RunInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows/{workflow_id}/runs".format(workflow_id=quote(str(workflow_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | WorkflowRun | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 201:
        response_201 = WorkflowRun.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | WorkflowRun | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    body: RunInput,

) -> Response[Problem | WorkflowRun | str]:
    """ Run a workflow.

     Runs the steps in order with the caller's credentials; a failing step fails the run
    (its output is `{"_error": {code, detail}}`) and later steps do not run; a step whose
    `if` does not hold is `{"_skipped": true, reason}`. Step errors are in the run, which is
    still `201` with `status: "failed"`. With `Accept: text/event-stream` the run streams
    the AI SDK UI-message stream (v1): start, then per step start-step,
    tool-input-available (toolCallId `<run id>:<step id>`), data-tool-loop-progress (at
    most one per 750 ms), tool-output-available or tool-output-error, finish-step; then
    finish and [DONE]. The run is recorded even if the client leaves.

    Args:
        workflow_id (str):
        body (RunInput): `POST /v1/workflows/{workflow_id}/runs` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowRun | str]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    body: RunInput,

) -> Problem | WorkflowRun | str | None:
    """ Run a workflow.

     Runs the steps in order with the caller's credentials; a failing step fails the run
    (its output is `{"_error": {code, detail}}`) and later steps do not run; a step whose
    `if` does not hold is `{"_skipped": true, reason}`. Step errors are in the run, which is
    still `201` with `status: "failed"`. With `Accept: text/event-stream` the run streams
    the AI SDK UI-message stream (v1): start, then per step start-step,
    tool-input-available (toolCallId `<run id>:<step id>`), data-tool-loop-progress (at
    most one per 750 ms), tool-output-available or tool-output-error, finish-step; then
    finish and [DONE]. The run is recorded even if the client leaves.

    Args:
        workflow_id (str):
        body (RunInput): `POST /v1/workflows/{workflow_id}/runs` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowRun | str
     """


    return sync_detailed(
        workflow_id=workflow_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    body: RunInput,

) -> Response[Problem | WorkflowRun | str]:
    """ Run a workflow.

     Runs the steps in order with the caller's credentials; a failing step fails the run
    (its output is `{"_error": {code, detail}}`) and later steps do not run; a step whose
    `if` does not hold is `{"_skipped": true, reason}`. Step errors are in the run, which is
    still `201` with `status: "failed"`. With `Accept: text/event-stream` the run streams
    the AI SDK UI-message stream (v1): start, then per step start-step,
    tool-input-available (toolCallId `<run id>:<step id>`), data-tool-loop-progress (at
    most one per 750 ms), tool-output-available or tool-output-error, finish-step; then
    finish and [DONE]. The run is recorded even if the client leaves.

    Args:
        workflow_id (str):
        body (RunInput): `POST /v1/workflows/{workflow_id}/runs` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WorkflowRun | str]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    body: RunInput,

) -> Problem | WorkflowRun | str | None:
    """ Run a workflow.

     Runs the steps in order with the caller's credentials; a failing step fails the run
    (its output is `{"_error": {code, detail}}`) and later steps do not run; a step whose
    `if` does not hold is `{"_skipped": true, reason}`. Step errors are in the run, which is
    still `201` with `status: "failed"`. With `Accept: text/event-stream` the run streams
    the AI SDK UI-message stream (v1): start, then per step start-step,
    tool-input-available (toolCallId `<run id>:<step id>`), data-tool-loop-progress (at
    most one per 750 ms), tool-output-available or tool-output-error, finish-step; then
    finish and [DONE]. The run is recorded even if the client leaves.

    Args:
        workflow_id (str):
        body (RunInput): `POST /v1/workflows/{workflow_id}/runs` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WorkflowRun | str
     """


    return (await asyncio_detailed(
        workflow_id=workflow_id,
client=client,
body=body,

    )).parsed
