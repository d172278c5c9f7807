from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_response_workflow_run import ListResponseWorkflowRun
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    workflow_id: str,
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    schedule_id: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["schedule_id"] = schedule_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{workflow_id}/runs".format(workflow_id=quote(str(workflow_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListResponseWorkflowRun | Problem | None:
    if response.status_code == 200:
        response_200 = ListResponseWorkflowRun.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListResponseWorkflowRun | Problem]:
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
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    schedule_id: str | Unset = UNSET,

) -> Response[ListResponseWorkflowRun | Problem]:
    """ List the caller's runs of a workflow.

     Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
    Listed: the runs made by the same caller (runtime token user, or org key); the
    scheduled runs (`trigger: "schedule"`) of the org for an org key (scope `runtime` or
    `studio`), and those run as the token's user for a runtime token. `?schedule_id=`
    keeps only one schedule's runs (one per due time, `scheduled_for`).

    Args:
        workflow_id (str):
        limit (int | Unset):
        cursor (str | Unset):
        schedule_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponseWorkflowRun | Problem]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
limit=limit,
cursor=cursor,
schedule_id=schedule_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    schedule_id: str | Unset = UNSET,

) -> ListResponseWorkflowRun | Problem | None:
    """ List the caller's runs of a workflow.

     Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
    Listed: the runs made by the same caller (runtime token user, or org key); the
    scheduled runs (`trigger: "schedule"`) of the org for an org key (scope `runtime` or
    `studio`), and those run as the token's user for a runtime token. `?schedule_id=`
    keeps only one schedule's runs (one per due time, `scheduled_for`).

    Args:
        workflow_id (str):
        limit (int | Unset):
        cursor (str | Unset):
        schedule_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponseWorkflowRun | Problem
     """


    return sync_detailed(
        workflow_id=workflow_id,
client=client,
limit=limit,
cursor=cursor,
schedule_id=schedule_id,

    ).parsed

async def asyncio_detailed(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    schedule_id: str | Unset = UNSET,

) -> Response[ListResponseWorkflowRun | Problem]:
    """ List the caller's runs of a workflow.

     Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
    Listed: the runs made by the same caller (runtime token user, or org key); the
    scheduled runs (`trigger: "schedule"`) of the org for an org key (scope `runtime` or
    `studio`), and those run as the token's user for a runtime token. `?schedule_id=`
    keeps only one schedule's runs (one per due time, `scheduled_for`).

    Args:
        workflow_id (str):
        limit (int | Unset):
        cursor (str | Unset):
        schedule_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponseWorkflowRun | Problem]
     """


    kwargs = _get_kwargs(
        workflow_id=workflow_id,
limit=limit,
cursor=cursor,
schedule_id=schedule_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    workflow_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    schedule_id: str | Unset = UNSET,

) -> ListResponseWorkflowRun | Problem | None:
    """ List the caller's runs of a workflow.

     Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
    Listed: the runs made by the same caller (runtime token user, or org key); the
    scheduled runs (`trigger: "schedule"`) of the org for an org key (scope `runtime` or
    `studio`), and those run as the token's user for a runtime token. `?schedule_id=`
    keeps only one schedule's runs (one per due time, `scheduled_for`).

    Args:
        workflow_id (str):
        limit (int | Unset):
        cursor (str | Unset):
        schedule_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponseWorkflowRun | Problem
     """


    return (await asyncio_detailed(
        workflow_id=workflow_id,
client=client,
limit=limit,
cursor=cursor,
schedule_id=schedule_id,

    )).parsed
