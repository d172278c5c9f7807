"""The README's walk-through, run as written: its ```python blocks, in order, in one
namespace, against the real service (the tenant's org key and looping agent); then its
`on_delivery` handler is given a real workflow delivery."""

from __future__ import annotations

import os
import pathlib
import re
import uuid
from typing import Any

from conftest import ROWS, Tenant, receiver

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def blocks() -> list[str]:
    text = README.read_text()
    section = text.split("\n## Walk-through\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_walk_through_runs(tenant: Tenant, capsys: Any) -> None:
    url, got = receiver()
    ep = tenant.studio.request("POST", "/v1/webhook-endpoints", json={"url": url})
    os.environ.update({"LOOPGATE_KEY": tenant.key, "LOOPGATE_AGENT_ID": tenant.agent_id,
                       "LOOPGATE_WEBHOOK_SECRET": ep["secret"]})
    try:
        code = blocks()
        assert len(code) >= 6
        ns: dict[str, Any] = {"__name__": "walk_through"}
        for block in code:
            exec(compile(block, str(README), "exec"), ns)
        out = capsys.readouterr().out
        assert f"{ROWS} rows; every page: True" in out
        assert "404 not_found" in out and f"async: {ROWS} rows" in out
        assert ns["counted"]["sound"] is True

        wf = tenant.studio.request("POST", "/v1/workflows", json={
            "name": f"readme-{uuid.uuid4().hex[:6]}", "agent_id": tenant.agent_id,
            "steps": [{"id": "one", "type": "tool", "tool": "list_items", "input": {"page": 1, "per_page": 5}}]})
        run = tenant.studio.request("POST", f"/v1/workflows/{wf['id']}/runs", json={})
        delivery = got.get(timeout=30)
        event = ns["on_delivery"](delivery.body, delivery.headers)
        assert event["data"]["id"] == run["id"]
    finally:
        tenant.studio.request("DELETE", f"/v1/webhook-endpoints/{ep['id']}")
