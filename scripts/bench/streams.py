#!/usr/bin/env python3
"""Opens N concurrent streamed tool calls (SSE) to loopgate and holds them open.

Usage: streams.py URL TOKEN N TOOL. Each call is `TOOL` with `{"offset": i}` (distinct
arguments: nothing is coalesced). Prints "ready <open> <failed>" once every stream has
its response head and first event (or failed), then holds them until stdin closes.
Used by scripts/bench-load for loopgate's memory per 1,000 concurrent streams."""
import asyncio
import json
import sys
from urllib.parse import urlparse


async def one(host, port, path, token, tool, i):
    body = json.dumps({"name": tool, "arguments": {"offset": i, "limit": 1}})
    r, w = await asyncio.open_connection(host, port)
    w.write((f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
             f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
             f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
    await w.drain()
    status = await r.readline()
    if b" 200 " not in status:
        w.close()
        return None
    while True:  # the head, then the first event
        line = await r.readline()
        if not line:
            return None
        if line.startswith(b"data:"):
            return (r, w)


async def main():
    url, token, n, tool = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    u = urlparse(url)
    sem = asyncio.Semaphore(100)  # connecting, not holding: all N stay open

    async def bounded(i):
        async with sem:
            try:
                return await asyncio.wait_for(one(u.hostname, u.port, u.path, token, tool, i), 30)
            except Exception:
                return None

    held = await asyncio.gather(*(bounded(i) for i in range(n)))
    opened = [h for h in held if h]
    print(f"ready {len(opened)} {n - len(opened)}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for _, w in opened:
        w.close()


asyncio.run(main())
