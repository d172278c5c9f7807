#!/usr/bin/env python3
"""The contract's examples, checked against the running service (scripts/contract,
step `examples`): each operation of `ORDER` is sent its request example (as documented
in the served /openapi.json) against a fresh org, in order, and its answer must have the
status of its response example, validate against that response's schema, and have the
example's shape (the same keys, recursively, but for keys the schema declares optional
there; the same JSON types, `null` matching any). An operation with an example that is not in ORDER, or in ORDER without its
examples, fails the run too.

What is substituted before sending, and only that: path parameters and the ids a body
names (`provider_id`, `tool_id`, `agent_id`, `deployment_id`, `workflow_id`) by the ids
the earlier steps created, `base_url` by the upstream this script serves (a paginated
`GET /items`), and a webhook endpoint's `url` by a local receiver. Env: B (service URL),
ADMIN (its admin token). Needs `jsonschema` (tests/contract/requirements.txt).
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from os import environ
from urllib.parse import parse_qs, urlparse

from jsonschema import Draft202012Validator

B, ADMIN = environ["B"].rstrip("/"), environ["ADMIN"]

# (operationId, the context key its answer's `id` is kept under)
ORDER = [
    ("getHealth", None),
    ("createOrg", "org_id"),
    ("getOrg", None),
    ("updateOrg", None),
    ("createApiKey", "key_id"),
    ("getApiKey", None),
    ("createDeployment", "deployment_id"),
    ("updateDeployment", None),
    ("createProvider", "provider_id"),
    ("getProvider", None),
    ("updateProvider", None),
    ("listProviders", None),
    ("importOpenapiTools", None),
    ("createTool", "tool_id"),
    ("getTool", None),
    ("updateTool", None),
    ("listTools", None),
    ("createAgent", "agent_id"),
    ("getAgent", None),
    ("createRuntimeToken", "token_id"),
    ("createStep", None),
    ("createToolCall", "call_id"),
    ("getToolCall", None),
    ("createWebhookEndpoint", "endpoint_id"),
    ("createWorkflow", "workflow_id"),
    ("createWorkflowRun", "run_id"),
    ("getWorkflowRun", None),
    ("createSchedule", "schedule_id"),
    ("getSchedule", None),
    ("listOrgs", None),
    ("listApiKeys", None),
    ("getDeployment", None),
    ("listDeployments", None),
    ("getAgentMcpResourceMetadata", None),
    ("getAgentPlacement", None),
    ("addAgentTool", None),
    ("getAgentTool", None),
    ("updateAgentTool", None),
    ("updateAgent", None),
    ("listAgents", None),
    ("postAgentMcp", None),
    ("getToolPagination", None),
    ("getWorkflow", None),
    ("updateWorkflow", None),
    ("listWorkflows", None),
    ("listWorkflowRuns", None),
    ("updateSchedule", None),
    ("listSchedules", None),
    ("getWebhookEndpoint", None),
    ("updateWebhookEndpoint", None),
    ("listWebhookEndpoints", None),
    ("listWebhookDeliveries", None),
    ("rotateWebhookSecret", None),
    ("listConnections", None),
    ("listAuditEvents", None),
    ("revokeApiKey", None),  # last: the key every step above used
]
# a body id that names another object than the context's (the binding added to the agent
# is the imported tool, not the one it already has)
BODY_ID_OVERRIDES = {"addAgentTool": {"tool_id": "imported_tool_id"}}
BODY_IDS = ("provider_id", "tool_id", "agent_id", "deployment_id", "workflow_id")
ROWS = 12


class Items(BaseHTTPRequestHandler):
    """`GET /items?page=&per_page=` over ROWS rows; any other request: `{}`."""

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        size, page = int(q.get("per_page", ["5"])[0]), int(q.get("page", ["1"])[0])
        rows = [{"id": i + 1, "name": f"item {i + 1}", "status": "open" if i % 3 else "closed"}
                for i in range((page - 1) * size, min(page * size, ROWS))]
        self.answer(200, {"items": rows, "total": ROWS} if u.path == "/items" else {})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.answer(204, None)

    def answer(self, status, doc):
        body = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def serve():
    s = ThreadingHTTPServer(("127.0.0.1", 0), Items)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{s.server_address[1]}"


def send(method, path, token, body=None, content_type="application/json", accept="application/json"):
    data = None
    headers = {"accept": accept}
    if token:
        headers["authorization"] = f"Bearer {token}"
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers["content-type"] = content_type
    req = urllib.request.Request(B + path, data=data, method=method.upper(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def operations(doc):
    out = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "operationId" in op:
                out[op["operationId"]] = (method, path, op)
    return out


def examples(op):
    """(request content type, request example or None, status, response example or None,
    response schema)."""
    req_type, req = None, None
    for ct, media in (op.get("requestBody") or {}).get("content", {}).items():
        if "example" in media:
            req_type, req = ct, media["example"]
            break
    for status, resp in op.get("responses", {}).items():
        for ct, media in resp.get("content", {}).items():
            if "example" in media and ct == "application/json":
                return req_type, req, int(status), media["example"], media.get("schema", {})
    return req_type, req, None, None, None


def substitute(v, ctx, key=None, ids=None):
    ids = ids or {}
    if isinstance(v, dict):
        return {k: substitute(x, ctx, k, ids) for k, x in v.items()}
    if isinstance(v, list):
        return [substitute(x, ctx, key, ids) for x in v]
    if key in BODY_IDS and ids.get(key, key) in ctx:
        return ctx[ids.get(key, key)]
    if key == "base_url":
        return ctx["upstream"]
    if key == "url" and isinstance(v, str) and "webhook" in v:
        return ctx["upstream"] + "/hooks"
    return v


def kind(v):
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def resolve(schema, doc):
    while isinstance(schema, dict) and "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema if isinstance(schema, dict) else {}


def shape_diff(want, got, schema, doc, at="$"):
    """Where `got` differs in shape from the example `want`: a key only one of them has is
    a difference unless the schema declares it optional there (a delivery's
    `next_attempt_at` is there while it waits, `last_status_code` once tried)."""
    schema = resolve(schema, doc)
    if want is None or got is None:
        return []
    if kind(want) != kind(got):
        return [f"{at}: the example is {kind(want)}, the answer {kind(got)}"]
    if isinstance(want, dict):
        props, required = schema.get("properties") or {}, set(schema.get("required") or [])
        optional = set(props) - required
        only_want = sorted(set(want) - set(got) - optional)
        only_got = sorted(set(got) - set(want) - optional)
        out = []
        if only_want or only_got:
            out.append(f"{at}: keys only in the example {only_want}, only in the answer {only_got}")
        for k in set(want) & set(got):
            out += shape_diff(want[k], got[k], props.get(k, {}), doc, f"{at}.{k}")
        return out
    if isinstance(want, list) and want and got:
        return shape_diff(want[0], got[0], schema.get("items", {}), doc, f"{at}[0]")
    return []


def token_for(op, ctx):
    for req in op.get("security") or []:
        if "runtimeToken" in req and "runtime" in ctx:
            return ctx["runtime"]
        if "orgKey" in req and "key" in ctx:
            return ctx["key"]
        if "adminToken" in req:
            return ADMIN
    return None


def main():
    status, raw = send("get", "/openapi.json", None)
    assert status == 200, status
    doc = json.loads(raw)
    ops = operations(doc)
    # drafting examples (not used by scripts/contract): `--draft FILE --capture OUT` sends
    # FILE's {operationId: {request, content_type, status}} and writes the answers to OUT
    captured, args = {}, sys.argv[1:]
    if args[:1] == ["--draft"]:
        for op_id, d in json.load(open(args[1])).items():
            _, _, op = ops[op_id]
            if d.get("request") is not None:
                ct = d.get("content_type", "application/json")
                op.setdefault("requestBody", {}).setdefault("content", {}).setdefault(ct, {})["example"] = d["request"]
            st = str(d["status"])
            media = op["responses"][st].setdefault("content", {}).setdefault("application/json", {})
            media.setdefault("example", None)
    failures = []
    ordered = {o for o, _ in ORDER}
    with_examples = {o for o, (_, _, op) in ops.items() if examples(op)[2] is not None}
    for o in sorted(with_examples - ordered):
        failures.append(f"{o}: has an example but is not in tests/contract/examples.py ORDER")
    ctx = {"upstream": serve(), "thread_id": "thread-1"}
    checked = 0
    for op_id, keep in ORDER:
        if op_id not in ops:
            failures.append(f"{op_id}: not in the document")
            continue
        method, path, op = ops[op_id]
        req_type, req, want_status, want, schema = examples(op)
        if want_status is None:
            failures.append(f"{op_id}: no response example")
            continue
        if op.get("requestBody") and req is None:
            failures.append(f"{op_id}: no request example")
            continue
        url = path
        for p in op.get("parameters", []):
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", ctx.get(p["name"], "missing"))
        body = substitute(req, ctx, ids=BODY_ID_OVERRIDES.get(op_id)) if req is not None else None
        if body is not None and req_type != "application/json":
            body = body if isinstance(body, str) else json.dumps(body)
        # MCP's streamable HTTP asks a client to accept both (the answer is JSON here)
        accept = "application/json, text/event-stream" if op_id == "postAgentMcp" else "application/json"
        status, raw = send(method, url, token_for(op, ctx), body, req_type or "application/json", accept)
        try:
            got = json.loads(raw) if raw else None
        except ValueError:
            got = None
        if status != want_status:
            failures.append(f"{op_id}: {method.upper()} {url} answered {status}, the example {want_status}: {raw[:300]!r}")
            continue
        root = dict(schema)
        root["components"] = doc["components"]
        errs = sorted(Draft202012Validator(root).iter_errors(got), key=lambda e: list(e.path))
        failures += [f"{op_id}: answer does not validate at {list(e.path)}: {e.message[:200]}" for e in errs[:5]]
        failures += [f"{op_id}: {d}" for d in shape_diff(want, got, schema, doc)]
        if keep and isinstance(got, dict):
            ctx[keep] = got["id"]
        if op_id == "createApiKey":
            ctx["key"] = got["key"]
        if op_id == "importOpenapiTools":
            ctx["imported_tool_id"] = got["data"][0]["id"]
        if op_id == "createRuntimeToken":
            ctx["runtime"] = got["token"]
        captured[op_id] = got
        checked += 1
    if args[2:3] == ["--capture"]:
        json.dump(captured, open(args[3], "w"), indent=1)
    missing = sorted(o for o in ops if o not in with_examples)
    print(f"examples: {checked} of {len(ORDER)} operations sent their example and matched; "
          f"{len(missing)} operations have no example: {', '.join(missing)}", file=sys.stderr)
    if failures:
        print("examples: FAILED\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
