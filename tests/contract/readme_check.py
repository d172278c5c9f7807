#!/usr/bin/env python3
"""Checks every answer of the README walk-through, as recorded by tests/contract/readme.sh.

Each curl of the walk-through left, in the folder given as the only argument, files
NNN.args (its arguments, NUL-separated), NNN.status (the HTTP status, `000` when no
answer came), NNN.head (the response headers), NNN.body and NNN.exit (curl's exit
status). Every call is matched to a step by its method, path and request (`STEPS`) and
that step's answer is checked: its status and the fields that say the step did what it is
for. A call matching no step fails the run (a new step of the README needs its check
here), and so does a step of `REQUIRED` that the walk-through no longer runs.

Calls to GitHub (the tool calls) may fail offline: their answer must then be the
documented `502 upstream_failed` problem (or, streamed, an `upstream_failed` error chunk),
with a detail; anything else fails. Online, the streamed call may meet the thread
restricted by the walk's cut answer (`409 retrieval_required`).
"""

import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

TOOL = "issues_list-for-repo"
RETRIEVAL = ("queryToolResult", "fetchToolResult")

# the steps today's walk-through runs; each must be seen at least once
REQUIRED = [
    "health",
    "org",
    "api_key",
    "deployment",
    "provider",
    "openapi_import",
    "tools_of_provider",
    "agent",
    "binding",
    "runtime_token",
    "tools_page",
    "steps",
    "tool_call",
    "tool_call_stream",
    "retrieval",
]


class Call:
    def __init__(self, folder: Path, n: str):
        self.n = n
        self.args = (folder / f"{n}.args").read_bytes().decode().split("\0")[:-1]
        self.status = int(read(folder / f"{n}.status") or "0")
        self.exit = int(read(folder / f"{n}.exit") or "0")
        self.head = read(folder / f"{n}.head")
        self.text = read(folder / f"{n}.body")
        self.method, self.url, self.data, self.headers = parse_args(self.args)
        parts = urlsplit(self.url)
        self.path = parts.path
        self.query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        self.req = as_json(self.data) if self.data and not self.data.startswith("@") else None
        self.body = as_json(self.text)
        self.content_type = header(self.head, "content-type")

    def describe(self) -> str:
        return f"call {self.n}: {self.method} {self.path}"


def read(p: Path) -> str:
    return p.read_text(errors="replace").strip() if p.exists() else ""


def as_json(text):
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def header(head: str, name: str) -> str:
    # the last response's headers (curl writes each of a redirect chain)
    value = ""
    for line in head.splitlines():
        k, _, v = line.partition(":")
        if k.strip().lower() == name:
            value = v.strip()
    return value


def parse_args(args):
    method, url, data, headers = None, None, None, {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-X", "--request"):
            method, i = args[i + 1], i + 2
            continue
        if a in ("-d", "--data", "--data-raw", "--data-binary", "--json"):
            data, i = args[i + 1], i + 2
            continue
        if a in ("-H", "--header"):
            k, _, v = args[i + 1].partition(":")
            headers[k.strip().lower()] = v.strip()
            i += 2
            continue
        if a in ("-o", "--output", "-w", "--write-out", "-D", "--dump-header"):
            sys.exit(f"README walk-through: a curl uses {a}, which the recorder sets itself")
        if a.startswith("http://") or a.startswith("https://"):
            url = a
        i += 1
    if url is None:
        sys.exit(f"README walk-through: a curl without a URL: {args}")
    if method is None:
        method = "POST" if data is not None else "GET"
    return method, url, data, headers


def step_of(c: Call):
    m, p = c.method, c.path
    if m == "GET" and p == "/healthz":
        return "health"
    if m == "POST" and p == "/v1/orgs":
        return "org"
    if m == "POST" and re.fullmatch(r"/v1/orgs/[^/]+/api-keys", p):
        return "api_key"
    if m == "POST" and re.fullmatch(r"/v1/orgs/[^/]+/deployments", p):
        return "deployment"
    if m == "POST" and p == "/v1/providers":
        return "provider"
    if m == "POST" and re.fullmatch(r"/v1/providers/[^/]+/openapi", p):
        return "openapi_import"
    if m == "GET" and p == "/v1/tools":
        return "tools_of_provider" if "provider_id" in c.query else "tools_page"
    if m == "POST" and p == "/v1/agents":
        return "agent"
    if m == "PATCH" and re.fullmatch(r"/v1/agents/[^/]+/tools/[^/]+", p):
        return "binding"
    if m == "POST" and p == "/v1/runtime-tokens":
        return "runtime_token"
    if m == "POST" and re.fullmatch(r"/v1/agents/[^/]+/threads/[^/]+/steps", p):
        return "steps"
    if m == "POST" and re.fullmatch(r"/v1/agents/[^/]+/threads/[^/]+/tool-calls", p):
        if "text/event-stream" in c.headers.get("accept", ""):
            return "tool_call_stream"
        if isinstance(c.req, dict) and c.req.get("name") in RETRIEVAL:
            return "retrieval"
        return "tool_call"
    return None


def check(c: Call, step: str, seen: dict):
    """The problems with this step's answer (none: the step did what it is for)."""
    b, req, s = c.body, c.req or {}, c.status
    out = []

    def need(cond, what):
        if not cond:
            out.append(what)

    def created(prefix):
        need(s == 201, f"status {s}, not 201")
        need(isinstance(b, dict) and str(b.get("id", "")).startswith(prefix), f"no {prefix}… id")

    if c.exit != 0 and s == 0:
        return [f"no answer (curl exit {c.exit})"]
    if step == "health":
        need(s == 200, f"status {s}, not 200")
    elif step == "org":
        created("org_")
        need(isinstance(b, dict) and b.get("name") == req.get("name"), "not the org asked for")
        seen["org"] = b and b.get("id")
    elif step == "api_key":
        created("key_")
        need(isinstance(b, dict) and isinstance(b.get("key"), str) and b["key"], "no key")
        need(isinstance(b, dict) and sorted(b.get("scopes") or []) == sorted(req.get("scopes") or []),
             "not the scopes asked for")
    elif step == "deployment":
        created("dep_")
        need(isinstance(b, dict) and b.get("cache") == req.get("cache"), "not the cache mode asked for")
    elif step == "provider":
        created("prv_")
        need(isinstance(b, dict) and b.get("base_url") == req.get("base_url"), "not the base_url asked for")
        need(isinstance(b, dict) and "credential" not in b, "a credential in the answer")
        seen["provider"] = b and b.get("id")
    elif step == "openapi_import":
        need(s in (200, 201), f"status {s}")
        names = [t.get("name") for t in (b or {}).get("data", [])] if isinstance(b, dict) else []
        need(TOOL in names, f"{TOOL} not imported")
    elif step == "tools_of_provider":
        need(s == 200, f"status {s}, not 200")
        data = b.get("data") if isinstance(b, dict) else None
        need(isinstance(data, list) and any(t.get("name") == TOOL for t in data), f"{TOOL} not listed")
        need(isinstance(data, list) and all(t.get("provider_id") == c.query["provider_id"] for t in data),
             "a tool of another provider listed")
    elif step == "tools_page":
        need(s == 200, f"status {s}, not 200")
        ok = isinstance(b, dict) and isinstance(b.get("data"), list)
        need(ok, "no data")
        if ok:
            limit = int(c.query.get("limit", "50"))
            need(len(b["data"]) <= limit, f"{len(b['data'])} rows for limit {limit}")
            need(isinstance(b.get("has_more"), bool), "no has_more")
            need(bool(b.get("cursor")) == bool(b.get("has_more")), "a cursor exactly when has_more")
            if "cursor" not in c.query:
                need(isinstance(b.get("total"), int), "no total on the first page")
    elif step == "agent":
        created("agt_")
        tools = (b or {}).get("agentTools") if isinstance(b, dict) else None
        asked = req.get("agentTools") or []
        need(isinstance(tools, list) and len(tools) == len(asked), "not the tools asked for")
        seen["agent"] = b and b.get("id")
    elif step == "binding":
        need(s == 200, f"status {s}, not 200")
        need(isinstance(b, dict) and b.get("loop_responses") == req.get("loop_responses"),
             "loop_responses not what was sent")
    elif step == "runtime_token":
        need(s == 201, f"status {s}, not 201")
        need(isinstance(b, dict) and isinstance(b.get("token"), str) and b["token"].count(".") == 2,
             "no JWT")
        need(isinstance(b, dict) and str(b.get("id", "")).startswith("rt_"), "no rt_… id")
        if isinstance(b, dict) and "ttl_seconds" in req:
            try:
                at = datetime.fromisoformat(b["expires_at"].replace("Z", "+00:00"))
                left = (at - datetime.now(timezone.utc)).total_seconds()
                need(abs(left - req["ttl_seconds"]) < 120, f"expires in {left:.0f} s")
            except (KeyError, ValueError, AttributeError):
                out.append("no expires_at")
    elif step == "steps":
        need(s == 200, f"status {s}, not 200")
        names = [t.get("name") for t in (b or {}).get("tools", [])] if isinstance(b, dict) else []
        need(TOOL in names, f"{TOOL} not among the tools")
        need(isinstance(b, dict) and isinstance(b.get("restricted"), bool), "no restricted")
    elif step == "tool_call":
        if s == 502:
            upstream_failed(c, need)
        else:
            need(s == 200, f"status {s}, not 200 (nor 502 upstream_failed)")
            r = b.get("result") if isinstance(b, dict) else None
            need(isinstance(r, dict), "no result")
            if isinstance(r, dict):
                need(isinstance(r.get("_itemCount"), int), "no _itemCount")
                need(isinstance(r.get("_pagingComplete"), bool), "no _pagingComplete")
                if r.get("_pagingComplete") is False:
                    need(r.get("_stoppedBy"), "an incomplete walk without _stoppedBy")
                    need(r.get("_note"), "an incomplete walk without _note")
                fields = set(req.get("arguments", {}).get("_fields") or [])
                rows = r.get("items") if isinstance(r.get("items"), list) else []
                need(all(set(row) <= fields for row in rows if isinstance(row, dict)),
                     "rows with fields not asked for")
                if r.get("_resultId"):
                    seen["result_id"] = r["_resultId"]
                seen["walked"] = True
                seen["cut"] = r.get("_truncated") is True
    elif step == "tool_call_stream":
        if s == 502:
            upstream_failed(c, need)
        elif s == 409:
            # G5: after a cut result the thread is restricted until it is read
            need(seen.get("cut"), "409 although no earlier answer was cut")
            need(isinstance(b, dict) and b.get("code") == "retrieval_required",
                 "409 that is not retrieval_required")
        else:
            need(s == 200, f"status {s}, not 200 (nor 409 retrieval_required, 502 upstream_failed)")
            need(c.content_type.startswith("text/event-stream"), f"content-type {c.content_type!r}")
            data = [ln[5:].strip() for ln in c.text.splitlines() if ln.startswith("data:")]
            need(data and data[-1] == "[DONE]", "the stream does not end with [DONE]")
            chunks = [as_json(d) for d in data[:-1]]
            need(all(isinstance(x, dict) and "type" in x for x in chunks), "a chunk that is not a typed object")
            kinds = [x.get("type") for x in chunks if isinstance(x, dict)]
            need(kinds[:1] == ["start"], f"the stream starts with {kinds[:1]}")
            ended = "tool-output-available" in kinds or "tool-output-error" in kinds or "error" in kinds
            need(ended, f"no outcome among {sorted(set(kinds))}")
            if "error" in kinds or "tool-output-error" in kinds:
                text = json.dumps(chunks)
                need(any(code in text for code in ("upstream_failed", "retrieval_required")),
                     "an error that is neither upstream_failed nor retrieval_required")
    elif step == "retrieval":
        rid = (req.get("arguments") or {}).get("resultId", "")
        if rid == seen.get("result_id"):
            need(s == 200 and isinstance(b, dict) and isinstance(b.get("result"), dict),
                 f"status {s}: the walk's own result not read back")
        else:
            # the README's placeholder (`res_…`): no such result in this thread
            need(s == 404 and isinstance(b, dict) and b.get("code") == "result_not_found",
                 f"status {s} {b.get('code') if isinstance(b, dict) else ''}: not 404 result_not_found")
    return out


def upstream_failed(c: Call, need):
    b = c.body
    need(isinstance(b, dict) and b.get("code") == "upstream_failed", "502 that is not upstream_failed")
    need(isinstance(b, dict) and b.get("detail"), "upstream_failed without a detail")
    need(c.content_type.startswith("application/problem+json"), f"content-type {c.content_type!r}")


def main():
    folder = Path(sys.argv[1])
    calls = [Call(folder, p.stem) for p in sorted(folder.glob("*.args"))]
    seen, ran, failed = {}, [], []
    for c in calls:
        step = step_of(c)
        if step is None:
            failed.append(f"{c.describe()} matches no step of tests/contract/readme_check.py")
            continue
        ran.append(step)
        for problem in check(c, step, seen):
            failed.append(f"{c.describe()} ({step}): {problem}\n    answer {c.status}: {c.text[:300]}")
    for step in REQUIRED:
        if step not in ran:
            failed.append(f"the walk-through no longer runs the step {step}")
    if failed:
        print("README walk-through: answers not as expected:", file=sys.stderr)
        for f in failed:
            print(f"  {f}", file=sys.stderr)
        sys.exit(1)
    offline = " (GitHub unreachable: its calls answered upstream_failed)" if not seen.get("walked") else ""
    print(f"README walk-through: {len(calls)} answers checked, {len(set(ran))} steps{offline}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
