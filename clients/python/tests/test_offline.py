"""What needs no service: the SSE decoder, the version tie, a delivery signed here."""

from __future__ import annotations

import json
import pathlib
import time
import tomllib

import pytest
from standardwebhooks.webhooks import Webhook

import loopgate
from loopgate import WebhookVerificationError, verify_delivery
from loopgate.events import Done, Finish, Progress, ToolOutputError, Unknown, decode

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_sse_chunks_become_typed_events() -> None:
    lines = [
        'data: {"type":"data-tool-loop-progress","id":"call_1","data":{"page":2,"pagesMax":20,"items":10,'
        '"requests":2,"requestsMax":60,"elapsedMs":812}}', "",
        ": a comment", 'data: {"type":"tool-output-error","toolCallId":"call_1","errorText":"upstream_failed: 502 from the API"}', "",
        'data: {"type":"finish","finishReason":"stop"}', "",
        'data: {"type":"something-new","x":1}', "",
        "data: [DONE]",
    ]
    evs = list(decode(lines))
    assert evs[0] == Progress(id="call_1", page=2, pages_max=20, items=10, requests=2, requests_max=60,
                              elapsed_ms=812, data=evs[0].data)  # type: ignore[union-attr]
    assert isinstance(evs[1], ToolOutputError) and evs[1].code == "upstream_failed"
    assert evs[2] == Finish("stop")
    assert isinstance(evs[3], Unknown) and evs[3].chunk["x"] == 1
    assert evs[4] == Done()


def test_the_version_is_the_contracts() -> None:
    doc = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    project = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())["project"]
    assert loopgate.__version__ == project["version"] == doc["info"]["version"]


def test_a_delivery_signed_with_the_secret_verifies() -> None:
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = json.dumps({"type": "workflow_run.succeeded", "data": {"id": "run_1"}})
    now = int(time.time())
    sig = Webhook(secret).sign("msg_1", __import__("datetime").datetime.fromtimestamp(now), body)
    headers = {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(now), "Webhook-Signature": sig}
    assert verify_delivery(secret, body.encode(), headers)["data"]["id"] == "run_1"
    with pytest.raises(WebhookVerificationError):
        verify_delivery(secret, body.replace("run_1", "run_2"), headers)
    old = {**headers, "Webhook-Timestamp": str(now - 3600)}
    with pytest.raises(WebhookVerificationError):
        verify_delivery(secret, body, old)
