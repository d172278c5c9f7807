"""Errors: a problem+json answer (RFC 9457) as an exception carrying its stable `code`."""

from __future__ import annotations

import json
from typing import Any


class LoopgateError(Exception):
    """An answer with status >= 400. `code` is the problem's stable code (`not_found`,
    `validation_failed`, `all_pages_unsupported`, ...), `detail` its text, `problem` the
    whole document; `retry_after` the `Retry-After` seconds of a 429 or 503."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        problem: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.problem: dict[str, Any] = problem or {}
        self.retry_after = retry_after

    @classmethod
    def from_answer(cls, status: int, body: bytes, headers: Any = None) -> LoopgateError:
        """The error of an answer: its problem document when it has one."""
        problem: dict[str, Any] = {}
        try:
            parsed = json.loads(body) if body else None
            if isinstance(parsed, dict):
                problem = parsed
        except ValueError:
            pass
        code = str(problem.get("code") or f"http_{status}")
        detail = str(problem.get("detail") or problem.get("title") or body[:200].decode("utf-8", "replace"))
        retry = None
        raw = headers.get("retry-after") if headers is not None else None
        if raw is not None and str(raw).isdigit():
            retry = int(raw)
        return cls(status, code, detail, problem, retry)


class ToolCallError(LoopgateError):
    """A streamed tool call that ended with `tool-output-error`: `code` and `detail` are
    read from its `errorText` (`<code>: <detail>`); `call_id` names the call."""

    def __init__(self, call_id: str, error_text: str) -> None:
        code, _, detail = error_text.partition(": ")
        super().__init__(200, code if detail else "tool_call_failed", detail or error_text)
        self.call_id = call_id


class WebhookVerificationError(Exception):
    """A delivery whose signature, timestamp or id does not verify against the secret."""
