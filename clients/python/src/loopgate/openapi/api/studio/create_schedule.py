from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.schedule_input import ScheduleInput
from ...models.schedule_view import ScheduleView
from typing import cast



def _get_kwargs(
    workflow_id: str,
    *,
    body: ScheduleInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows/{workflow_id}/schedules".format(workflow_id=quote(str(workflow_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ScheduleView | None:
    if response.status_code == 201:
        response_201 = ScheduleView.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ScheduleView]:
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
    body: ScheduleInput,

) -> Response[Problem | ScheduleView]:
    """ Create a schedule on a workflow.

     The workflow then runs at every due time of `cron` in `timezone`, with nobody
    present: runs have `trigger: "schedule"`, `schedule_id` and `scheduled_for`, and at
    most one exists per due time however many replicas run. Daylight-saving changes
    follow the zone's clocks: a fixed time in a skipped hour runs once right after the
    gap, a fixed time in a repeated hour runs once (its first pass).

    Args:
        workflow_id (str):
        body (ScheduleInput): `POST /v1/workflows/{workflow_id}/schedules` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScheduleView]
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
    body: ScheduleInput,

) -> Problem | ScheduleView | None:
    """ Create a schedule on a workflow.

     The workflow then runs at every due time of `cron` in `timezone`, with nobody
    present: runs have `trigger: "schedule"`, `schedule_id` and `scheduled_for`, and at
    most one exists per due time however many replicas run. Daylight-saving changes
    follow the zone's clocks: a fixed time in a skipped hour runs once right after the
    gap, a fixed time in a repeated hour runs once (its first pass).

    Args:
        workflow_id (str):
        body (ScheduleInput): `POST /v1/workflows/{workflow_id}/schedules` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScheduleView
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
    body: ScheduleInput,

) -> Response[Problem | ScheduleView]:
    """ Create a schedule on a workflow.

     The workflow then runs at every due time of `cron` in `timezone`, with nobody
    present: runs have `trigger: "schedule"`, `schedule_id` and `scheduled_for`, and at
    most one exists per due time however many replicas run. Daylight-saving changes
    follow the zone's clocks: a fixed time in a skipped hour runs once right after the
    gap, a fixed time in a repeated hour runs once (its first pass).

    Args:
        workflow_id (str):
        body (ScheduleInput): `POST /v1/workflows/{workflow_id}/schedules` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScheduleView]
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
    body: ScheduleInput,

) -> Problem | ScheduleView | None:
    """ Create a schedule on a workflow.

     The workflow then runs at every due time of `cron` in `timezone`, with nobody
    present: runs have `trigger: "schedule"`, `schedule_id` and `scheduled_for`, and at
    most one exists per due time however many replicas run. Daylight-saving changes
    follow the zone's clocks: a fixed time in a skipped hour runs once right after the
    gap, a fixed time in a repeated hour runs once (its first pass).

    Args:
        workflow_id (str):
        body (ScheduleInput): `POST /v1/workflows/{workflow_id}/schedules` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScheduleView
     """


    return (await asyncio_detailed(
        workflow_id=workflow_id,
client=client,
body=body,

    )).parsed
