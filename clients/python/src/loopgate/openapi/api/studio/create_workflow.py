from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.workflow import Workflow
from ...models.workflow_input import WorkflowInput
from typing import cast



def _get_kwargs(
    *,
    body: WorkflowInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/workflows",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | Workflow | None:
    if response.status_code == 201:
        response_201 = Workflow.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | Workflow]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: WorkflowInput,

) -> Response[Problem | Workflow]:
    """ Create a workflow.

     A workflow is `{name, agent_id, steps}`: tool-call steps of one agent run in order, each
    able to use the reserved arguments and read earlier steps' outputs and the run's `input`
    (LOOP_ENGINE W1-W3). Answers `201`.

    Args:
        body (WorkflowInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Workflow]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: WorkflowInput,

) -> Problem | Workflow | None:
    """ Create a workflow.

     A workflow is `{name, agent_id, steps}`: tool-call steps of one agent run in order, each
    able to use the reserved arguments and read earlier steps' outputs and the run's `input`
    (LOOP_ENGINE W1-W3). Answers `201`.

    Args:
        body (WorkflowInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Workflow
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: WorkflowInput,

) -> Response[Problem | Workflow]:
    """ Create a workflow.

     A workflow is `{name, agent_id, steps}`: tool-call steps of one agent run in order, each
    able to use the reserved arguments and read earlier steps' outputs and the run's `input`
    (LOOP_ENGINE W1-W3). Answers `201`.

    Args:
        body (WorkflowInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | Workflow]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: WorkflowInput,

) -> Problem | Workflow | None:
    """ Create a workflow.

     A workflow is `{name, agent_id, steps}`: tool-call steps of one agent run in order, each
    able to use the reserved arguments and read earlier steps' outputs and the run's `input`
    (LOOP_ENGINE W1-W3). Answers `201`.

    Args:
        body (WorkflowInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | Workflow
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
