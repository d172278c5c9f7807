// The official TypeScript MCP SDK as a *client* of loopgate's MCP server, calling a slow
// walking tool as a task (M3, MCP 2025-11-25). Two replicas of loopgate serve one
// session: the task is created on replica A and followed on replica B (the same
// session, resumed by id: the SDK client skips initialize for a transport that has one).
//
// Usage: node m3-tasks-client.mjs <url A> <url B> <bearer token> <mode> <tool> <arguments JSON>
//   follow: a plain call with a short timeout (it times out), then the same call as a
//           task created on A (answered at once), polled on A, its result read on B; the
//           SDK's own callToolStream on A (short timeouts, it polls); a plain call to its
//           end; the task listed on B.
//   cancel: a task created on A, polled until the walk reports progress, cancelled on B,
//           its status and partial result read on A; a second cancel (refused); the task
//           id asked in another session (not found).
// Prints one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [urlA, urlB, token, mode, tool, args = "{}"] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };
const params = { name: tool, arguments: JSON.parse(args) };
const SHORT = { timeout: 1_500 };
const LONG = { timeout: 45_000 };

async function open(url, sessionId) {
  const client = new Client({ name: "loopgate-m3-test", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    ...(sessionId ? { sessionId } : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

const errorOf = (e) => ({ code: e?.code ?? null, message: String(e?.message ?? e) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const a = await open(urlA);
const sessionId = a.transport.sessionId;
const b = await open(urlB, sessionId);
const out = {
  sessionId,
  capabilities: a.client.getServerCapabilities() ?? null,
  tools: (await a.client.listTools()).tools,
};

async function create() {
  const created = await a.client.request(
    { method: "tools/call", params: { ...params, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
    SHORT,
  );
  out.createdMeta = created._meta ?? null;
  return created.task;
}

if (mode === "follow") {
  // a client that waits 1.5 s for a walk of seconds gives up
  try {
    await a.client.callTool(params, CallToolResultSchema, SHORT);
    out.plainShort = "answered";
  } catch (e) {
    out.plainShort = errorOf(e);
  }
  const task = await create();
  out.created = task;
  out.polledA = [];
  for (let i = 0; i < 3; i++) {
    out.polledA.push(await a.client.experimental.tasks.getTask(task.taskId, SHORT));
    await sleep(200);
  }
  // blocks on replica B until the walk on replica A ends
  out.resultB = await b.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, LONG);
  out.afterB = await b.client.experimental.tasks.getTask(task.taskId, SHORT);
  // the SDK's own task flow: create, poll at pollInterval, read the result, each request
  // with the short timeout
  out.stream = [];
  for await (const m of a.client.experimental.tasks.callToolStream(params, CallToolResultSchema, {
    ...SHORT,
    task: { ttl: 60_000 },
  })) {
    out.stream.push(m.type === "error" ? { type: "error", error: errorOf(m.error) } : m);
  }
  out.plain = await a.client.callTool(params, CallToolResultSchema, LONG);
  out.listedB = await b.client.experimental.tasks.listTasks(undefined, SHORT);
} else if (mode === "cancel") {
  const task = await create();
  out.created = task;
  let seen = task;
  for (let i = 0; i < 50 && !seen.statusMessage; i++) {
    await sleep(200);
    seen = await a.client.experimental.tasks.getTask(task.taskId, SHORT);
  }
  out.progress = seen;
  out.cancelB = await b.client.experimental.tasks.cancelTask(task.taskId, SHORT);
  out.afterA = await a.client.experimental.tasks.getTask(task.taskId, SHORT);
  out.resultA = await a.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, LONG);
  try {
    await b.client.experimental.tasks.cancelTask(task.taskId, SHORT);
    out.cancelAgain = "answered";
  } catch (e) {
    out.cancelAgain = errorOf(e);
  }
  // the same task id, asked in another session of the same caller
  const c = await open(urlA);
  try {
    await c.client.experimental.tasks.getTask(task.taskId, SHORT);
    out.otherSession = "answered";
  } catch (e) {
    out.otherSession = errorOf(e);
  }
  await c.client.close();
}

await a.client.close();
await b.client.close();
process.stdout.write(JSON.stringify(out) + "\n");
