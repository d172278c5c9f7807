"""loopgate's Python client: typed, sync (`Loopgate`) and async (`AsyncLoopgate`), on
httpx. The models and operations are generated from openapi/openapi.json
(`loopgate.openapi.api`, `loopgate.openapi.models`); this layer adds following every page, streamed tool
calls as typed events, errors as exceptions with the problem's `code`, and verifying
workflow deliveries (Standard Webhooks)."""

from . import events
from .openapi import api, models
from .client import AsyncLoopgate, Loopgate, ToolCallOutcome
from .errors import LoopgateError, ToolCallError, WebhookVerificationError
from .webhooks import verify_delivery

__version__ = "0.1.0"

__all__ = [
    "AsyncLoopgate",
    "Loopgate",
    "LoopgateError",
    "ToolCallError",
    "ToolCallOutcome",
    "WebhookVerificationError",
    "api",
    "events",
    "models",
    "verify_delivery",
]
