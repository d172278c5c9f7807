from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.endpoint_input import EndpointInput
from ...models.endpoint_view import EndpointView
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    body: EndpointInput,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhook-endpoints",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EndpointView | Problem | None:
    if response.status_code == 201:
        response_201 = EndpointView.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EndpointView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: EndpointInput,

) -> Response[EndpointView | Problem]:
    """ Create a webhook endpoint.

     Every finished workflow run of the org (scheduled or not) whose event the endpoint
    subscribes to is POSTed to it per Standard Webhooks: headers `webhook-id`,
    `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of
    "id.timestamp.body">` with the secret), body `{type, timestamp, data: <the run>}`. Any
    2xx is success; otherwise it is retried with doubling back-off for at least 24 hours.
    The signing secret is in this answer only.

    Args:
        body (EndpointInput): `POST /v1/webhook-endpoints` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointView | Problem]
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
    body: EndpointInput,

) -> EndpointView | Problem | None:
    """ Create a webhook endpoint.

     Every finished workflow run of the org (scheduled or not) whose event the endpoint
    subscribes to is POSTed to it per Standard Webhooks: headers `webhook-id`,
    `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of
    "id.timestamp.body">` with the secret), body `{type, timestamp, data: <the run>}`. Any
    2xx is success; otherwise it is retried with doubling back-off for at least 24 hours.
    The signing secret is in this answer only.

    Args:
        body (EndpointInput): `POST /v1/webhook-endpoints` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointView | Problem
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: EndpointInput,

) -> Response[EndpointView | Problem]:
    """ Create a webhook endpoint.

     Every finished workflow run of the org (scheduled or not) whose event the endpoint
    subscribes to is POSTed to it per Standard Webhooks: headers `webhook-id`,
    `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of
    "id.timestamp.body">` with the secret), body `{type, timestamp, data: <the run>}`. Any
    2xx is success; otherwise it is retried with doubling back-off for at least 24 hours.
    The signing secret is in this answer only.

    Args:
        body (EndpointInput): `POST /v1/webhook-endpoints` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointView | Problem]
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
    body: EndpointInput,

) -> EndpointView | Problem | None:
    """ Create a webhook endpoint.

     Every finished workflow run of the org (scheduled or not) whose event the endpoint
    subscribes to is POSTed to it per Standard Webhooks: headers `webhook-id`,
    `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of
    "id.timestamp.body">` with the secret), body `{type, timestamp, data: <the run>}`. Any
    2xx is success; otherwise it is retried with doubling back-off for at least 24 hours.
    The signing secret is in this answer only.

    Args:
        body (EndpointInput): `POST /v1/webhook-endpoints` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointView | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
