from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_response_delivery import ListResponseDelivery
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    endpoint_id: str,
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/webhook-endpoints/{endpoint_id}/deliveries".format(endpoint_id=quote(str(endpoint_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListResponseDelivery | Problem | None:
    if response.status_code == 200:
        response_200 = ListResponseDelivery.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListResponseDelivery | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ListResponseDelivery | Problem]:
    """ List an endpoint's deliveries, newest first.

     One per finished run and event: `status` `pending` (being retried: `next_attempt_at`),
    `succeeded` or `failed`, with the number of `attempts` and the last answer's status.
    Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.

    Args:
        endpoint_id (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponseDelivery | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
limit=limit,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ListResponseDelivery | Problem | None:
    """ List an endpoint's deliveries, newest first.

     One per finished run and event: `status` `pending` (being retried: `next_attempt_at`),
    `succeeded` or `failed`, with the number of `attempts` and the last answer's status.
    Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.

    Args:
        endpoint_id (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponseDelivery | Problem
     """


    return sync_detailed(
        endpoint_id=endpoint_id,
client=client,
limit=limit,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ListResponseDelivery | Problem]:
    """ List an endpoint's deliveries, newest first.

     One per finished run and event: `status` `pending` (being retried: `next_attempt_at`),
    `succeeded` or `failed`, with the number of `attempts` and the last answer's status.
    Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.

    Args:
        endpoint_id (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponseDelivery | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
limit=limit,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ListResponseDelivery | Problem | None:
    """ List an endpoint's deliveries, newest first.

     One per finished run and event: `status` `pending` (being retried: `next_attempt_at`),
    `succeeded` or `failed`, with the number of `attempts` and the last answer's status.
    Paginated, newest first: the first page reports `total`; when `has_more` is true,
    pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.

    Args:
        endpoint_id (str):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponseDelivery | Problem
     """


    return (await asyncio_detailed(
        endpoint_id=endpoint_id,
client=client,
limit=limit,
cursor=cursor,

    )).parsed
