"""The SSE chunks of a streamed tool call or workflow run (the AI SDK UI-message stream,
v1; API.md "Streaming") as typed events. An unknown chunk type is kept as `Unknown`, so a
newer service does not break an older client."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Start:
    type: str = "start"


@dataclass(frozen=True)
class StartStep:
    type: str = "start-step"


@dataclass(frozen=True)
class ToolInputAvailable:
    tool_call_id: str
    tool_name: str
    input: Any
    type: str = "tool-input-available"


@dataclass(frozen=True)
class Progress:
    """`data-tool-loop-progress` (LOOP_ENGINE S1): at most one per 750 ms while a walk runs."""

    id: str
    page: int = 0
    pages_max: int = 0
    items: int = 0
    requests: int = 0
    requests_max: int = 0
    elapsed_ms: int = 0
    value: Any = None
    data: dict[str, Any] = field(default_factory=dict)
    type: str = "data-tool-loop-progress"


@dataclass(frozen=True)
class ToolOutputAvailable:
    tool_call_id: str
    output: Any
    type: str = "tool-output-available"


@dataclass(frozen=True)
class ToolOutputError:
    tool_call_id: str
    error_text: str
    type: str = "tool-output-error"

    @property
    def code(self) -> str:
        """The problem's code, the part of `errorText` before `: `."""
        return self.error_text.partition(": ")[0]


@dataclass(frozen=True)
class FinishStep:
    type: str = "finish-step"


@dataclass(frozen=True)
class Finish:
    finish_reason: str | None = None
    type: str = "finish"


@dataclass(frozen=True)
class Done:
    """`data: [DONE]`, the stream's last event."""

    type: str = "done"


@dataclass(frozen=True)
class Unknown:
    chunk: dict[str, Any]
    type: str = "unknown"


StreamEvent = Union[
    Start,
    StartStep,
    ToolInputAvailable,
    Progress,
    ToolOutputAvailable,
    ToolOutputError,
    FinishStep,
    Finish,
    Done,
    Unknown,
]


def _int(d: dict[str, Any], k: str) -> int:
    v = d.get(k)
    return v if isinstance(v, int) else 0


def event_of(chunk: dict[str, Any]) -> StreamEvent:
    """One parsed chunk as its typed event."""
    t = chunk.get("type")
    if t == "start":
        return Start()
    if t == "start-step":
        return StartStep()
    if t == "tool-input-available":
        return ToolInputAvailable(str(chunk.get("toolCallId", "")), str(chunk.get("toolName", "")), chunk.get("input"))
    if t == "data-tool-loop-progress":
        d = chunk.get("data") if isinstance(chunk.get("data"), dict) else {}
        assert isinstance(d, dict)
        return Progress(
            id=str(chunk.get("id", "")),
            page=_int(d, "page"),
            pages_max=_int(d, "pagesMax"),
            items=_int(d, "items"),
            requests=_int(d, "requests"),
            requests_max=_int(d, "requestsMax"),
            elapsed_ms=_int(d, "elapsedMs"),
            value=d.get("value"),
            data=d,
        )
    if t == "tool-output-available":
        return ToolOutputAvailable(str(chunk.get("toolCallId", "")), chunk.get("output"))
    if t == "tool-output-error":
        return ToolOutputError(str(chunk.get("toolCallId", "")), str(chunk.get("errorText", "")))
    if t == "finish-step":
        return FinishStep()
    if t == "finish":
        r = chunk.get("finishReason")
        return Finish(r if isinstance(r, str) else None)
    return Unknown(chunk)


class SseDecoder:
    """Server-Sent Events lines in, events out: `data:` lines joined until a blank line;
    comments (`:`) and other fields are ignored."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def line(self, line: str) -> StreamEvent | None:
        line = line.rstrip("\r")
        if line == "":
            if not self._data:
                return None
            data, self._data = "\n".join(self._data), []
            if data == "[DONE]":
                return Done()
            parsed = json.loads(data)
            return event_of(parsed) if isinstance(parsed, dict) else Unknown({"data": parsed})
        if line.startswith("data:"):
            v = line[5:]
            self._data.append(v[1:] if v.startswith(" ") else v)
        return None

    def end(self) -> StreamEvent | None:
        """The event of a stream that ended without its last blank line."""
        return self.line("")


def decode(lines: Iterable[str]) -> Iterator[StreamEvent]:
    dec = SseDecoder()
    for line in lines:
        ev = dec.line(line)
        if ev is not None:
            yield ev
    last = dec.end()
    if last is not None:
        yield last
