from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.tool_call_record import ToolCallRecord
from typing import cast



def _get_kwargs(
    call_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/tool-calls/{call_id}".format(call_id=quote(str(call_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ToolCallRecord | None:
    if response.status_code == 200:
        response_200 = ToolCallRecord.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ToolCallRecord]:
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

) -> Response[Problem | ToolCallRecord]:
    """ Read a tool call's outcome (same caller), e.g. after a disconnect mid-walk.

     The call's record: `status` (`running`, `succeeded`, `failed`), and once it ended the
    `result` as the model saw it or the problem (`error`) it ended with. Only the caller that
    made the call may read it (another caller gets `404`).

    Args:
        call_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolCallRecord]
     """


    kwargs = _get_kwargs(
        call_id=call_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    call_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | ToolCallRecord | None:
    """ Read a tool call's outcome (same caller), e.g. after a disconnect mid-walk.

     The call's record: `status` (`running`, `succeeded`, `failed`), and once it ended the
    `result` as the model saw it or the problem (`error`) it ended with. Only the caller that
    made the call may read it (another caller gets `404`).

    Args:
        call_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolCallRecord
     """


    return sync_detailed(
        call_id=call_id,
client=client,

    ).parsed

async def asyncio_detailed(
    call_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[Problem | ToolCallRecord]:
    """ Read a tool call's outcome (same caller), e.g. after a disconnect mid-walk.

     The call's record: `status` (`running`, `succeeded`, `failed`), and once it ended the
    `result` as the model saw it or the problem (`error`) it ended with. Only the caller that
    made the call may read it (another caller gets `404`).

    Args:
        call_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ToolCallRecord]
     """


    kwargs = _get_kwargs(
        call_id=call_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    call_id: str,
    *,
    client: AuthenticatedClient,

) -> Problem | ToolCallRecord | None:
    """ Read a tool call's outcome (same caller), e.g. after a disconnect mid-walk.

     The call's record: `status` (`running`, `succeeded`, `failed`), and once it ended the
    `result` as the model saw it or the problem (`error`) it ended with. Only the caller that
    made the call may read it (another caller gets `404`).

    Args:
        call_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ToolCallRecord
     """


    return (await asyncio_detailed(
        call_id=call_id,
client=client,

    )).parsed
