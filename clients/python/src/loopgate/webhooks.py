"""Verifying a workflow delivery: loopgate signs every webhook delivery as Standard
Webhooks do (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 over
`id.timestamp.body` with the endpoint's `whsec_…` secret); verified here with the
reference library (PyPI `standardwebhooks`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError as _Invalid

from .errors import WebhookVerificationError


def verify_delivery(secret: str, body: bytes | str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The delivery's JSON payload (`{type, timestamp, data}`), once its signature and
    timestamp (within five minutes) verify; else `WebhookVerificationError`. Pass the body
    exactly as received and the request's headers (any case)."""
    lower = {k.lower(): v for k, v in headers.items()}
    raw = body.decode("utf-8") if isinstance(body, bytes) else body
    try:
        Webhook(secret).verify(raw, lower)
    except _Invalid as e:
        raise WebhookVerificationError(str(e)) from e
    payload = json.loads(raw)
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the payload is not a JSON object")
    return payload
