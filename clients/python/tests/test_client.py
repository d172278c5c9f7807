"""The client against the real service: a backend's day (mint, list, a streamed walk of
every page, its stored result, a verified delivery), sync and async."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

from conftest import ROWS, URL, Tenant, receiver
from loopgate import AsyncLoopgate, Loopgate, LoopgateError, ToolCallError, WebhookVerificationError, verify_delivery
from loopgate.events import Done, Progress, Start, ToolInputAvailable, ToolOutputAvailable
from loopgate.openapi.api.studio import create_tool, list_tools
from loopgate.openapi.models import Tool, ToolInput, ToolInputInputSchema
from loopgate.openapi.models.list_response_tool_data_item import ListResponseToolDataItem


def test_mint_and_every_page_of_a_list(tenant: Tenant) -> None:
    made = set()
    for i in range(5):
        body = ToolInput(provider_id=tenant.provider_id, name=f"extra_{i}", method="GET", path="/items",
                         input_schema=ToolInputInputSchema.from_dict({"type": "object", "properties": {}}))
        t = tenant.studio.call(create_tool, body=body)
        assert isinstance(t, Tool)
        made.add(t.id)
    rows = list(tenant.studio.list_all(list_tools, limit=2, provider_id=tenant.provider_id))
    assert all(isinstance(r, ListResponseToolDataItem) for r in rows)
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)) == 6  # five extra tools and list_items, over three pages
    assert made <= set(ids)
    # by path, rows as dicts: the same set
    assert {r["id"] for r in tenant.studio.list_all("/v1/tools", limit=4, provider_id=tenant.provider_id)} == set(ids)

    token = tenant.studio.mint_runtime_token("user-1", ttl_seconds=600)
    assert token.token and token.id.startswith("rt_")


def test_a_streamed_walk_its_record_and_stored_result(tenant: Tenant) -> None:
    token = tenant.studio.mint_runtime_token("user-2")
    with Loopgate(URL, token.token) as rt:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        events = list(rt.stream_tool_call(tenant.agent_id, thread, "list_items", {"_all_pages": True}))
        assert isinstance(events[0], Start)
        assert isinstance(events[-1], Done)
        started = next(e for e in events if isinstance(e, ToolInputAvailable))
        assert started.tool_name == "list_items" and started.input == {"_all_pages": True}
        progress = [e for e in events if isinstance(e, Progress)]
        assert progress and progress[0].id == started.tool_call_id and progress[-1].pages_max >= 1
        out = next(e for e in events if isinstance(e, ToolOutputAvailable))
        assert out.output["_itemCount"] == ROWS and out.output["_pagingComplete"] is True
        assert [r["id"] for r in out.output["items"]] == list(range(1, ROWS + 1))

        record = rt.get_tool_call(started.tool_call_id)
        assert record.status == "succeeded" and record.name == "list_items"
        assert isinstance(record.result, dict) and record.result["_resultId"] == out.output["_resultId"]

        q = rt.query_result(tenant.agent_id, thread, out.output["_resultId"],
                            filter=[{"field": "team", "op": "eq", "value": "a"}], limit=100)
        assert q["total"] == ROWS // 2 and all(r["team"] == "a" for r in q["items"])
        agg = rt.query_result(tenant.agent_id, thread, out.output["_resultId"], aggregate={"count": True})
        assert agg["sound"] is True

        # run_tool_call: the same walk read to its end (served from the cache now)
        again = rt.run_tool_call(tenant.agent_id, thread, "list_items", {"_all_pages": True, "_fields": ["id"]})
        assert again.output["items"][0] == {"id": 1}


def test_errors_carry_the_problem_code(tenant: Tenant) -> None:
    with pytest.raises(LoopgateError) as e:
        tenant.studio.request("GET", "/v1/tools/tool_doesnotexist")
    assert e.value.status == 404 and e.value.code == "not_found"
    with pytest.raises(LoopgateError) as e:
        tenant.studio.mint_runtime_token("u", ttl_seconds=5)
    assert e.value.status == 422 and e.value.code == "validation_failed" and "ttl_seconds" in e.value.detail
    with Loopgate(URL, "not-a-token") as nobody, pytest.raises(LoopgateError) as e:
        list(nobody.list_all("/v1/tools"))
    assert e.value.status == 401 and e.value.code == "unauthorized"
    # a streamed call that ends in error: the code is read from the stream
    with pytest.raises(ToolCallError) as te:
        tenant.studio.run_tool_call(tenant.agent_id, "t-err", "list_items", {"_for_each": {"key": "nope", "values": [1]}})
    assert te.value.code == "invalid_for_each_key"


def test_a_verified_workflow_delivery(tenant: Tenant) -> None:
    url, got = receiver()
    ep = tenant.studio.request("POST", "/v1/webhook-endpoints", json={"url": url})
    try:
        wf = tenant.studio.request("POST", "/v1/workflows", json={
            "name": f"wf-{uuid.uuid4().hex[:6]}", "agent_id": tenant.agent_id,
            "steps": [{"id": "all", "type": "tool", "tool": "list_items", "input": {}, "loop": {"all_pages": True}}]})
        run = tenant.studio.request("POST", f"/v1/workflows/{wf['id']}/runs", json={})
        assert run["status"] == "succeeded"
        delivery = got.get(timeout=30)
        payload = verify_delivery(ep["secret"], delivery.body, delivery.headers)
        assert payload["type"] == "workflow_run.succeeded" and payload["data"]["id"] == run["id"]
        tampered = delivery.body.replace(b"succeeded", b"failed")
        with pytest.raises(WebhookVerificationError):
            verify_delivery(ep["secret"], tampered, delivery.headers)
        with pytest.raises(WebhookVerificationError):
            verify_delivery("whsec_" + "A" * 32, delivery.body, delivery.headers)
    finally:
        tenant.studio.request("DELETE", f"/v1/webhook-endpoints/{ep['id']}")


def test_async_the_same_day(tenant: Tenant) -> None:
    async def day() -> None:
        async with AsyncLoopgate(URL, tenant.key) as lg:
            rows = [r async for r in lg.list_all(list_tools, limit=1, provider_id=tenant.provider_id)]
            assert len(rows) >= 1
            token = await lg.mint_runtime_token("user-async")
        async with AsyncLoopgate(URL, token.token) as rt:
            thread = f"a-{uuid.uuid4().hex[:8]}"
            events = [e async for e in rt.stream_tool_call(tenant.agent_id, thread, "list_items", {"_all_pages": True})]
            out = next(e for e in events if isinstance(e, ToolOutputAvailable))
            assert out.output["_itemCount"] == ROWS
            record = await rt.get_tool_call(out.tool_call_id)
            assert record.status == "succeeded"
            q = await rt.query_result(tenant.agent_id, thread, out.output["_resultId"], limit=5)
            assert q["total"] == ROWS and len(q["items"]) == 5
            with pytest.raises(LoopgateError) as e:
                await rt.get_tool_call("call_doesnotexist")
            assert e.value.code == "not_found"

    asyncio.run(day())
