// Against a running loopgate (scripts/contract starts one): LOOPGATE_URL and
// LOOPGATE_ADMIN_TOKEN. The service must allow private upstreams: the test serves the
// upstream API itself on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLoopgate, listAll, streamToolCall, LoopgateError } from '../src/index.js';

const url = process.env.LOOPGATE_URL ?? 'http://127.0.0.1:8080';
const adminToken = process.env.LOOPGATE_ADMIN_TOKEN ?? '';

/** An upstream list API: `GET /items?page=&per_page=` over `rows` rows. */
async function upstream(rows: number): Promise<string> {
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const size = Number(q.get('per_page') ?? 5);
    const page = Number(q.get('page') ?? 1);
    const items = [];
    for (let i = (page - 1) * size; i < Math.min(page * size, rows); i++) items.push({ id: i + 1, name: `item ${i + 1}` });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ items, total: rows }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  server.unref();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function tenant() {
  const admin = createLoopgate(url, adminToken);
  const org = await admin.POST('/v1/orgs', { body: { name: `ts-client-${Date.now()}` } });
  assert.equal(org.response.status, 201);
  const orgId = org.data!.id;
  const key = await admin.POST('/v1/orgs/{org_id}/api-keys', {
    params: { path: { org_id: orgId } },
    body: { name: 'ts', scopes: ['studio', 'mint', 'runtime'] },
  });
  const dep = await admin.POST('/v1/orgs/{org_id}/deployments', {
    params: { path: { org_id: orgId } },
    body: { name: 'prod', cache: 'on' },
  });
  const lg = createLoopgate(url, key.data!.key);
  const provider = await lg.POST('/v1/providers', {
    body: { name: 'items', base_url: await upstream(23), auth: { type: 'none' } },
  });
  assert.equal(provider.response.status, 201, JSON.stringify(provider.error));
  return { lg, deploymentId: dep.data!.id, providerId: provider.data!.id };
}

test('listAll follows cursors: "list all tools" returns every tool', async () => {
  const { lg, providerId } = await tenant();
  const made = new Set<string>();
  for (let i = 0; i < 7; i++) {
    const t = await lg.POST('/v1/tools', {
      body: {
        provider_id: providerId, name: `tool_${i}`, description: `tool ${i}`, method: 'GET', path: '/items',
        input_schema: { type: 'object', properties: {} },
      },
    });
    assert.equal(t.response.status, 201, JSON.stringify(t.error));
    made.add(t.data!.id);
  }
  let pages = 0;
  const tools = await listAll((cursor) => {
    pages++;
    return lg.GET('/v1/tools', { params: { query: { cursor, limit: 2 } } });
  });
  assert.equal(pages, 4);
  assert.deepEqual(new Set(tools.map((t) => t.id)), made);
});

test('a streamed tool call read with the ai package walks every page', async () => {
  const { lg, deploymentId, providerId } = await tenant();
  const tool = await lg.POST('/v1/tools', {
    body: {
      provider_id: providerId, name: 'list_items', description: 'List items', method: 'GET', path: '/items',
      input_schema: {
        type: 'object',
        properties: { page: { type: 'integer' }, per_page: { type: 'integer', maximum: 5 } },
      },
    },
  });
  const agent = await lg.POST('/v1/agents', {
    body: {
      name: 'walker', deployment_id: deploymentId,
      agentTools: [{ tool_id: tool.data!.id, provider_id: providerId, loop_responses: true }],
    },
  });
  assert.equal(agent.response.status, 201, JSON.stringify(agent.error));
  const minted = await lg.POST('/v1/runtime-tokens', { body: { user_id: 'u-1', agent_id: agent.data!.id } });
  const rt = createLoopgate(url, minted.data!.token);

  let last;
  for await (const message of streamToolCall(rt, {
    agentId: agent.data!.id, threadId: 't1', name: 'list_items', arguments: { _all_pages: true },
  })) {
    last = message;
  }
  const part = last!.parts.find((p) => p.type === 'tool-list_items') as
    | { state: string; output: { _itemCount: number; _pagingComplete: boolean } }
    | undefined;
  assert.equal(part?.state, 'output-available');
  assert.equal(part!.output._itemCount, 23);
  assert.equal(part!.output._pagingComplete, true);

  // an error is a typed problem (this token is limited to its agent)
  await assert.rejects(
    async () => {
      for await (const _ of streamToolCall(rt, { agentId: 'agt_nope', threadId: 't1', name: 'x' })) { /* none */ }
    },
    (e: unknown) => e instanceof LoopgateError && e.status === 403 && e.problem?.code === 'forbidden',
  );
});
