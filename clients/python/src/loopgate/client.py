"""`Loopgate` (sync) and `AsyncLoopgate` (asyncio): the hand-written layer over the
generated client (`loopgate.openapi`, from openapi/openapi.json). Every operation is
reachable typed through `.api` and the generated modules; the methods here are the ones
a backend uses every day, with errors raised as `LoopgateError` (carrying the problem's
`code`) instead of returned."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from types import ModuleType
from typing import Any

import httpx

from .openapi.client import AuthenticatedClient
from .openapi.models.problem import Problem
from .openapi.models.runtime_token import RuntimeToken
from .openapi.models.runtime_token_input import RuntimeTokenInput
from .openapi.models.runtime_token_input_credentials import RuntimeTokenInputCredentials
from .openapi.models.tool_call_record import ToolCallRecord
from .openapi.models.tool_call_response import ToolCallResponse
from .openapi.types import UNSET, Response
from .errors import LoopgateError, ToolCallError
from .events import SseDecoder, StreamEvent, ToolOutputAvailable, ToolOutputError

__all__ = ["Loopgate", "AsyncLoopgate", "ToolCallOutcome"]

DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
"""A walk may take its whole 60 s budget and a `_for_each` more: reads wait 120 s."""

MAX_PAGES = 100_000


def _checked(r: Response[Any]) -> Any:
    """The parsed body of a generated `*_detailed` answer, or its problem raised."""
    if r.status_code >= 400 or isinstance(r.parsed, Problem):
        raise LoopgateError.from_answer(int(r.status_code), r.content, r.headers)
    return r.parsed


def _raise_for(r: httpx.Response) -> None:
    if r.status_code >= 400:
        raise LoopgateError.from_answer(r.status_code, r.read() if not r.is_stream_consumed else r.content, r.headers)


def _call_body(name: str, arguments: Mapping[str, Any] | None, experiment: bool) -> dict[str, Any]:
    """The `ToolCallInput` body; `arguments` is sent as given (the tool's own arguments
    and the reserved ones), not through the generated model."""
    return {"name": name, "arguments": dict(arguments or {}), "experiment": experiment}


def _mint_body(
    user_id: str,
    agent_id: str | None,
    ttl_seconds: int | None,
    cache_scope: str | None,
    credentials: Mapping[str, str] | None,
) -> RuntimeTokenInput:
    return RuntimeTokenInput(
        user_id=user_id,
        agent_id=agent_id if agent_id is not None else UNSET,
        ttl_seconds=ttl_seconds if ttl_seconds is not None else UNSET,
        cache_scope=cache_scope if cache_scope is not None else UNSET,
        credentials=RuntimeTokenInputCredentials.from_dict(dict(credentials)) if credentials else UNSET,
    )


class ToolCallOutcome:
    """What a streamed call ended with: its id, its output (what entered the
    conversation) and every event seen."""

    def __init__(self, call_id: str, output: Any, events: list[StreamEvent]) -> None:
        self.call_id = call_id
        self.output = output
        self.events = events


class _Base:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        t = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.base_url = base_url.rstrip("/")
        self.api = AuthenticatedClient(
            base_url=self.base_url, token=token, timeout=t, headers=dict(headers or {}), raise_on_unexpected_status=False
        )
        """The generated client: pass it to any generated operation (`client=lg.api`)."""

    @staticmethod
    def _tool_calls_path(agent_id: str, thread_id: str) -> str:
        from urllib.parse import quote

        return f"/v1/agents/{quote(agent_id, safe='')}/threads/{quote(thread_id, safe='')}/tool-calls"


class Loopgate(_Base):
    """A client for `base_url` sending `Authorization: Bearer <token>` (the admin token,
    an org key or a runtime token). Use as a context manager, or call `close()`."""

    def __enter__(self) -> Loopgate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def call(self, operation: ModuleType, /, **kwargs: Any) -> Any:
        """Run a generated operation (`from loopgate.openapi.api.studio import create_tool`;
        `lg.call(create_tool, body=...)`): its parsed answer, or its problem raised."""
        return _checked(operation.sync_detailed(client=self.api, **kwargs))

    def request(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """A request by path; the JSON answer (or `None` for 204), or its problem raised."""
        r = self.api.get_httpx_client().request(method, path, json=json, params=params)
        _raise_for(r)
        return r.json() if r.content else None

    def list_all(self, operation: ModuleType | str, /, *, limit: int = 200, max_pages: int = MAX_PAGES, **params: Any) -> Iterator[Any]:
        """Every row of a list, page after page until `has_more` is false: `operation` is a
        generated list module (rows typed) or a path such as `/v1/tools` (rows as dicts)."""
        cursor: str | None = None
        for _ in range(max_pages):
            if isinstance(operation, str):
                q = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
                page = self.request("GET", operation, params=q)
                yield from page["data"]
                more, cursor = bool(page.get("has_more")), page.get("cursor")
            else:
                p = self.call(operation, limit=limit, cursor=cursor if cursor else UNSET, **params)
                yield from p.data
                more, cursor = bool(p.has_more), (p.cursor if isinstance(p.cursor, str) else None)
            if not more or not cursor:
                return
        raise LoopgateError(0, "too_many_pages", f"more than {max_pages} pages")

    def mint_runtime_token(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        ttl_seconds: int | None = None,
        cache_scope: str | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> RuntimeToken:
        """`POST /v1/runtime-tokens` (org key with scope `mint`)."""
        from .openapi.api.runtime import create_runtime_token

        body = _mint_body(user_id, agent_id, ttl_seconds, cache_scope, credentials)
        out: RuntimeToken = self.call(create_runtime_token, body=body)
        return out

    def tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> ToolCallResponse:
        """Run a tool call and wait for its outcome (JSON)."""
        r = self.api.get_httpx_client().post(
            self._tool_calls_path(agent_id, thread_id), json=_call_body(name, arguments, experiment)
        )
        _raise_for(r)
        return ToolCallResponse.from_dict(r.json())

    def stream_tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> Iterator[StreamEvent]:
        """Run a tool call as a stream (`Accept: text/event-stream`) and yield its chunks as
        typed events, progress included, ending with `Done`."""
        with self.api.get_httpx_client().stream(
            "POST",
            self._tool_calls_path(agent_id, thread_id),
            json=_call_body(name, arguments, experiment),
            headers={"accept": "text/event-stream"},
        ) as r:
            if r.status_code >= 400:
                raise LoopgateError.from_answer(r.status_code, r.read(), r.headers)
            dec = SseDecoder()
            for line in r.iter_lines():
                ev = dec.line(line)
                if ev is not None:
                    yield ev
            last = dec.end()
            if last is not None:
                yield last

    def run_tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> ToolCallOutcome:
        """`stream_tool_call` read to its end: the outcome, or `ToolCallError` (a
        `LoopgateError` with the problem's `code`) when the call ended in error."""
        events: list[StreamEvent] = []
        for ev in self.stream_tool_call(agent_id, thread_id, name, arguments, experiment=experiment):
            events.append(ev)
        return _outcome(events)

    def get_tool_call(self, call_id: str) -> ToolCallRecord:
        """`GET /v1/tool-calls/{call_id}`: a call's stored record (same caller)."""
        from .openapi.api.runtime import get_tool_call

        out: ToolCallRecord = self.call(get_tool_call, call_id=call_id)
        return out

    def query_result(
        self, agent_id: str, thread_id: str, result_id: str, **query: Any
    ) -> Any:
        """`queryToolResult` over a stored result (`filter`, `fields`, `offset`, `limit`,
        `aggregate`): `{items, total, offset, limit, has_more}` or the aggregate answer."""
        return self.tool_call(agent_id, thread_id, "queryToolResult", {"resultId": result_id, **query}).result

    def fetch_result(self, agent_id: str, thread_id: str, result_id: str, offset: int = 0, length: int = 20_000) -> Any:
        """`fetchToolResult`: a stored result's text from `offset`."""
        args = {"resultId": result_id, "offset": offset, "length": length}
        return self.tool_call(agent_id, thread_id, "fetchToolResult", args).result


class AsyncLoopgate(_Base):
    """`Loopgate` for asyncio: the same methods, awaited (and `async for` the streams)."""

    async def __aenter__(self) -> AsyncLoopgate:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.api.get_async_httpx_client().aclose()

    async def call(self, operation: ModuleType, /, **kwargs: Any) -> Any:
        return _checked(await operation.asyncio_detailed(client=self.api, **kwargs))

    async def request(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        r = await self.api.get_async_httpx_client().request(method, path, json=json, params=params)
        if r.status_code >= 400:
            raise LoopgateError.from_answer(r.status_code, r.content, r.headers)
        return r.json() if r.content else None

    async def list_all(self, operation: ModuleType | str, /, *, limit: int = 200, max_pages: int = MAX_PAGES, **params: Any) -> AsyncIterator[Any]:
        cursor: str | None = None
        for _ in range(max_pages):
            if isinstance(operation, str):
                q = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
                page = await self.request("GET", operation, params=q)
                for row in page["data"]:
                    yield row
                more, cursor = bool(page.get("has_more")), page.get("cursor")
            else:
                p = await self.call(operation, limit=limit, cursor=cursor if cursor else UNSET, **params)
                for row in p.data:
                    yield row
                more, cursor = bool(p.has_more), (p.cursor if isinstance(p.cursor, str) else None)
            if not more or not cursor:
                return
        raise LoopgateError(0, "too_many_pages", f"more than {max_pages} pages")

    async def mint_runtime_token(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        ttl_seconds: int | None = None,
        cache_scope: str | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> RuntimeToken:
        from .openapi.api.runtime import create_runtime_token

        body = _mint_body(user_id, agent_id, ttl_seconds, cache_scope, credentials)
        out: RuntimeToken = await self.call(create_runtime_token, body=body)
        return out

    async def tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> ToolCallResponse:
        r = await self.api.get_async_httpx_client().post(
            self._tool_calls_path(agent_id, thread_id), json=_call_body(name, arguments, experiment)
        )
        if r.status_code >= 400:
            raise LoopgateError.from_answer(r.status_code, r.content, r.headers)
        return ToolCallResponse.from_dict(r.json())

    async def stream_tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> AsyncIterator[StreamEvent]:
        async with self.api.get_async_httpx_client().stream(
            "POST",
            self._tool_calls_path(agent_id, thread_id),
            json=_call_body(name, arguments, experiment),
            headers={"accept": "text/event-stream"},
        ) as r:
            if r.status_code >= 400:
                raise LoopgateError.from_answer(r.status_code, await r.aread(), r.headers)
            dec = SseDecoder()
            async for line in r.aiter_lines():
                ev = dec.line(line)
                if ev is not None:
                    yield ev
            last = dec.end()
            if last is not None:
                yield last

    async def run_tool_call(
        self, agent_id: str, thread_id: str, name: str, arguments: Mapping[str, Any] | None = None, *, experiment: bool = False
    ) -> ToolCallOutcome:
        events: list[StreamEvent] = []
        async for ev in self.stream_tool_call(agent_id, thread_id, name, arguments, experiment=experiment):
            events.append(ev)
        return _outcome(events)

    async def get_tool_call(self, call_id: str) -> ToolCallRecord:
        from .openapi.api.runtime import get_tool_call

        out: ToolCallRecord = await self.call(get_tool_call, call_id=call_id)
        return out

    async def query_result(self, agent_id: str, thread_id: str, result_id: str, **query: Any) -> Any:
        return (await self.tool_call(agent_id, thread_id, "queryToolResult", {"resultId": result_id, **query})).result

    async def fetch_result(self, agent_id: str, thread_id: str, result_id: str, offset: int = 0, length: int = 20_000) -> Any:
        args = {"resultId": result_id, "offset": offset, "length": length}
        return (await self.tool_call(agent_id, thread_id, "fetchToolResult", args)).result


def _outcome(events: list[StreamEvent]) -> ToolCallOutcome:
    for ev in events:
        if isinstance(ev, ToolOutputError):
            raise ToolCallError(ev.tool_call_id, ev.error_text)
        if isinstance(ev, ToolOutputAvailable):
            return ToolCallOutcome(ev.tool_call_id, ev.output, events)
    raise LoopgateError(0, "stream_cut", "the stream ended without the call's outcome")
