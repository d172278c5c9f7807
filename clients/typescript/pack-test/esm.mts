// An ESM consumer of the packed package (pack-test/run.sh): imports resolve through the
// `import` condition, types included.
import { createLoopgate, listAll, LoopgateError, type components } from '@loopgate/client';

const lg = createLoopgate(process.env.LOOPGATE_URL!, process.env.LOOPGATE_KEY!);
const health = await lg.GET('/healthz');
if (health.data?.status !== 'ok') throw new Error(`healthz: ${JSON.stringify(health.data)}`);
const tools: components['schemas']['Tool'][] = await listAll((cursor) =>
  lg.GET('/v1/tools', { params: { query: { cursor, limit: 200 } } }),
);
// @ts-expect-error: not a path of the contract (fails to compile if the types were `any`)
void lg.GET('/v1/no-such-path');
const missing = await lg.GET('/v1/tools/{tool_id}', { params: { path: { tool_id: 'tool_nope' } } });
if (missing.response.status !== 404 || missing.error?.code !== 'not_found') throw new Error('expected 404 not_found');
console.log(`esm: ${tools.length} tools; ${new LoopgateError(404, missing.error).message}`);
