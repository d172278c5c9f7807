from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.rotated_secret import RotatedSecret
from typing import cast



def _get_kwargs(
    endpoint_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhook-endpoints/{endpoint_id}/rotate-secret".format(endpoint_id=quote(str(endpoint_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RotatedSecret | None:
    if response.status_code == 200:
        response_200 = RotatedSecret.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RotatedSecret]:
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

) -> Response[Problem | RotatedSecret]:
    """ Rotate an endpoint's signing secret.

     Answers the new secret, once. For the next 24 hours every delivery is signed with
    both (two space-separated `v1,` signatures), so the receiver can switch without
    losing a message.

    Args:
        endpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RotatedSecret]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | RotatedSecret | None:
    """ Rotate an endpoint's signing secret.

     Answers the new secret, once. For the next 24 hours every delivery is signed with
    both (two space-separated `v1,` signatures), so the receiver can switch without
    losing a message.

    Args:
        endpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RotatedSecret
     """


    return sync_detailed(
        endpoint_id=endpoint_id,
client=client,

    ).parsed

async def asyncio_detailed(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | RotatedSecret]:
    """ Rotate an endpoint's signing secret.

     Answers the new secret, once. For the next 24 hours every delivery is signed with
    both (two space-separated `v1,` signatures), so the receiver can switch without
    losing a message.

    Args:
        endpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RotatedSecret]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    endpoint_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | RotatedSecret | None:
    """ Rotate an endpoint's signing secret.

     Answers the new secret, once. For the next 24 hours every delivery is signed with
    both (two space-separated `v1,` signatures), so the receiver can switch without
    losing a message.

    Args:
        endpoint_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RotatedSecret
     """


    return (await asyncio_detailed(
        endpoint_id=endpoint_id,
client=client,

    )).parsed
