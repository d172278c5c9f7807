"""Against a running loopgate (scripts/contract starts one): LOOPGATE_URL and
LOOPGATE_ADMIN_TOKEN. The service must allow private upstreams: the tests serve the
upstream API and the webhook receiver themselves on 127.0.0.1."""

from __future__ import annotations

import json
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from loopgate import Loopgate

URL = os.environ.get("LOOPGATE_URL", "http://127.0.0.1:8080")
ADMIN = os.environ.get("LOOPGATE_ADMIN_TOKEN", "")
ROWS = 23
PAGE_DELAY = 0.3
"""Each upstream page takes this long, so a walk of five pages lasts past the 750 ms
after which progress is reported (S1)."""


def _serve(handler: type[BaseHTTPRequestHandler]) -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


class _Items(BaseHTTPRequestHandler):
    """`GET /items?page=&per_page=` over ROWS rows, each `{id, name, team}`."""

    def do_GET(self) -> None:
        q = parse_qs(urlparse(self.path).query)
        size = int(q.get("per_page", ["5"])[0])
        page = int(q.get("page", ["1"])[0])
        rows = [{"id": i + 1, "name": f"item {i + 1}", "team": "a" if i % 2 else "b"}
                for i in range((page - 1) * size, min(page * size, ROWS))]
        time.sleep(PAGE_DELAY)
        body = json.dumps({"items": rows, "total": ROWS}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]


def receiver() -> tuple[str, queue.Queue[Received]]:
    """A webhook receiver: every POST is queued as received (body bytes, headers)."""
    got: queue.Queue[Received] = queue.Queue()

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            got.put(Received(body, {k: v for k, v in self.headers.items()}))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    return _serve(H), got


@dataclass
class Tenant:
    admin: Loopgate
    org_id: str
    key: str
    studio: Loopgate
    deployment_id: str
    provider_id: str
    tool_id: str
    agent_id: str


@pytest.fixture(scope="session")
def tenant() -> Iterator[Tenant]:
    """An org with a key of every scope, a deployment, a provider on the local upstream,
    a paginated tool and an agent that loops over it."""
    admin = Loopgate(URL, ADMIN)
    org = admin.request("POST", "/v1/orgs", json={"name": f"py-client-{uuid.uuid4().hex[:8]}"})
    key = admin.request("POST", f"/v1/orgs/{org['id']}/api-keys",
                        json={"name": "py", "scopes": ["studio", "mint", "runtime"]})["key"]
    dep = admin.request("POST", f"/v1/orgs/{org['id']}/deployments", json={"name": "prod", "cache": "on"})
    studio = Loopgate(URL, key)
    prov = studio.request("POST", "/v1/providers",
                          json={"name": "items", "base_url": _serve(_Items), "auth": {"type": "none"}})
    tool = studio.request("POST", "/v1/tools", json={
        "provider_id": prov["id"], "name": "list_items", "description": "List items", "method": "GET",
        "path": "/items", "input_schema": {"type": "object", "properties": {
            "page": {"type": "integer"}, "per_page": {"type": "integer", "maximum": 5}}}})
    agent = studio.request("POST", "/v1/agents", json={
        "name": "py", "deployment_id": dep["id"],
        "agentTools": [{"tool_id": tool["id"], "provider_id": prov["id"], "loop_responses": True}]})
    yield Tenant(admin, org["id"], key, studio, dep["id"], prov["id"], tool["id"], agent["id"])
    studio.close()
    admin.close()
