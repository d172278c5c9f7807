from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.connect_form import ConnectForm
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    link: str,
    *,
    body: ConnectForm,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/connect/{link}".format(link=quote(str(link), safe=""),),
    }

    _kwargs["data"] = body.to_dict()
    headers["Content-Type"] = "application/x-www-form-urlencoded"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 303:
        response_303 = cast(Any, None)
        return response_303

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    link: str,
    *,
    client: AuthenticatedClient | Client,
    body: ConnectForm,

) -> Response[Any | Problem | str]:
    """ Submit the connect page: stores an API key, or redirects to the OAuth sign-in.

     Public, form-encoded (`application/x-www-form-urlencoded`). An API-key toolkit stores the
    key and answers an HTML confirmation (`200`); an OAuth toolkit answers `303` to the
    authorization server. The link is spent either way.

    Args:
        link (str):
        body (ConnectForm): The connect page's form.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem | str]
     """


    kwargs = _get_kwargs(
        link=link,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    link: str,
    *,
    client: AuthenticatedClient | Client,
    body: ConnectForm,

) -> Any | Problem | str | None:
    """ Submit the connect page: stores an API key, or redirects to the OAuth sign-in.

     Public, form-encoded (`application/x-www-form-urlencoded`). An API-key toolkit stores the
    key and answers an HTML confirmation (`200`); an OAuth toolkit answers `303` to the
    authorization server. The link is spent either way.

    Args:
        link (str):
        body (ConnectForm): The connect page's form.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem | str
     """


    return sync_detailed(
        link=link,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    link: str,
    *,
    client: AuthenticatedClient | Client,
    body: ConnectForm,

) -> Response[Any | Problem | str]:
    """ Submit the connect page: stores an API key, or redirects to the OAuth sign-in.

     Public, form-encoded (`application/x-www-form-urlencoded`). An API-key toolkit stores the
    key and answers an HTML confirmation (`200`); an OAuth toolkit answers `303` to the
    authorization server. The link is spent either way.

    Args:
        link (str):
        body (ConnectForm): The connect page's form.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem | str]
     """


    kwargs = _get_kwargs(
        link=link,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    link: str,
    *,
    client: AuthenticatedClient | Client,
    body: ConnectForm,

) -> Any | Problem | str | None:
    """ Submit the connect page: stores an API key, or redirects to the OAuth sign-in.

     Public, form-encoded (`application/x-www-form-urlencoded`). An API-key toolkit stores the
    key and answers an HTML confirmation (`200`); an OAuth toolkit answers `303` to the
    authorization server. The link is spent either way.

    Args:
        link (str):
        body (ConnectForm): The connect page's form.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem | str
     """


    return (await asyncio_detailed(
        link=link,
client=client,
body=body,

    )).parsed
