// The official TypeScript MCP SDK as an upstream MCP server whose tools run as tasks
// (M3, MCP 2025-11-25): the SDK's documented task API — McpServer with an
// InMemoryTaskStore and InMemoryTaskMessageQueue, tools registered with
// `server.experimental.tasks.registerToolTask` — in the stateful pattern of
// server-stateful.mjs (one transport per session; a task lives in its session).
//
// Usage: node server-tasks.mjs [port]   (0 or none: any free port)
// Prints one line `{"port": N}` once it listens. GET /log answers every HTTP request it
// saw: {http, session, auth, method, taskId, task (the ttl asked), progressToken, at (ms)}.
//
// Tools (every task suggests pollInterval 300 ms):
// - `export_rows` (taskSupport "required"): `stages` stages of `stage_ms` each (3 × 400
//   by default), each one its statusMessage "stage k of n" and a progress notification
//   for the call's token (queued with the task: the SDK delivers it on tasks/result);
//   then `rows` rows as structuredContent `{rows: [...]}`.
// - `quick_sum` (taskSupport "optional"): `{sum: a + b}` after 100 ms.
// - `failing_export` (taskSupport "required"): fails after 200 ms with an isError result.
// - `needs_answer` (taskSupport "required"): after 100 ms its status is input_required
//   (it waits for an answer loopgate, with no elicitation to offer, cannot give).
import { randomUUID } from "node:crypto";
import express from "express";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const log = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const POLL_MS = 300;

// work on a task while it is not ended (a cancelled task's status is terminal)
async function live(store, taskId) {
  const task = await store.getTask(taskId).catch(() => null);
  return task && (task.status === "working" || task.status === "input_required");
}

function getServer() {
  const taskStore = new InMemoryTaskStore();
  const server = new McpServer(
    { name: "sdk-task-peer", version: "1.0.0" },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const getTask = async (_args, extra) => extra.taskStore.getTask(extra.taskId);
  const getTaskResult = async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId);

  server.experimental.tasks.registerToolTask(
    "export_rows",
    {
      description: "Exports rows; only as a task",
      inputSchema: { rows: z.number().int().optional(), stages: z.number().int().optional(), stage_ms: z.number().int().optional() },
      execution: { taskSupport: "required" },
    },
    {
      createTask: async (args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: POLL_MS });
        const token = extra._meta?.progressToken;
        const stages = args.stages ?? 3;
        (async () => {
          for (let i = 1; i <= stages; i++) {
            if (!(await live(extra.taskStore, task.taskId))) return;
            await extra.taskStore.updateTaskStatus(task.taskId, "working", `stage ${i} of ${stages}`);
            if (token !== undefined) {
              await server.server.notification(
                { method: "notifications/progress", params: { progressToken: token, progress: i, total: stages, message: `stage ${i} of ${stages}` } },
                { relatedTask: { taskId: task.taskId } },
              );
            }
            await sleep(args.stage_ms ?? 400);
          }
          if (!(await live(extra.taskStore, task.taskId))) return;
          const rows = Array.from({ length: args.rows ?? 3 }, (_, i) => ({ id: i + 1, name: `row ${i + 1}`, note: "exported by a task" }));
          await extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: JSON.stringify({ rows }) }],
            structuredContent: { rows },
          });
        })().catch((e) => console.error("export_rows:", e));
        return { task };
      },
      getTask,
      getTaskResult,
    },
  );

  server.experimental.tasks.registerToolTask(
    "quick_sum",
    {
      description: "Adds two numbers; as a task when asked",
      inputSchema: { a: z.number(), b: z.number() },
      execution: { taskSupport: "optional" },
    },
    {
      createTask: async (args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: POLL_MS });
        (async () => {
          await sleep(100);
          const sum = { sum: args.a + args.b };
          await extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: JSON.stringify(sum) }],
            structuredContent: sum,
          });
        })().catch((e) => console.error("quick_sum:", e));
        return { task };
      },
      getTask,
      getTaskResult,
    },
  );

  server.experimental.tasks.registerToolTask(
    "failing_export",
    { description: "Always fails; only as a task", inputSchema: {}, execution: { taskSupport: "required" } },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: POLL_MS });
        (async () => {
          await sleep(200);
          await extra.taskStore.storeTaskResult(task.taskId, "failed", {
            isError: true,
            content: [{ type: "text", text: "the export broke: disk full" }],
          });
        })().catch((e) => console.error("failing_export:", e));
        return { task };
      },
      getTask,
      getTaskResult,
    },
  );
  server.experimental.tasks.registerToolTask(
    "needs_answer",
    { description: "Asks which export to run; only as a task", inputSchema: {}, execution: { taskSupport: "required" } },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60000, pollInterval: POLL_MS });
        (async () => {
          await sleep(100);
          await extra.taskStore.updateTaskStatus(task.taskId, "input_required", "which export: daily or weekly?");
        })().catch((e) => console.error("needs_answer:", e));
        return { task };
      },
      getTask,
      getTaskResult,
    },
  );
  return server;
}

const app = express();
app.use(express.json({ limit: "4mb" }));

// what the test reads back
app.get("/log", (_req, res) => res.json(log));

function record(req) {
  const body = req.body ?? {};
  log.push({
    http: req.method,
    session: req.headers["mcp-session-id"] ?? null,
    auth: req.headers["authorization"] ?? null,
    method: body.method ?? null,
    taskId: body.params?.taskId ?? null,
    task: body.params?.task ?? null,
    progressToken: body.params?._meta?.progressToken ?? null,
    at: Date.now(),
  });
}

const transports = {};

app.post("/mcp", async (req, res) => {
  record(req);
  const sessionId = req.headers["mcp-session-id"];
  let transport;
  if (sessionId && transports[sessionId]) {
    transport = transports[sessionId];
  } else if (!sessionId && isInitializeRequest(req.body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports[id] = transport;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) delete transports[transport.sessionId];
    };
    await getServer().connect(transport);
  } else {
    res.status(400).json({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Bad Request: No valid session ID provided" },
      id: null,
    });
    return;
  }
  await transport.handleRequest(req, res, req.body);
});

async function sessionRequest(req, res) {
  record(req);
  const sessionId = req.headers["mcp-session-id"];
  if (!sessionId || !transports[sessionId]) {
    res.status(400).send("Invalid or missing session ID");
    return;
  }
  await transports[sessionId].handleRequest(req, res);
}
app.get("/mcp", sessionRequest);
app.delete("/mcp", sessionRequest);

const port = Number(process.argv[2] ?? 0);
const listener = app.listen(port, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: listener.address().port }) + "\n");
});
process.on("SIGTERM", () => process.exit(0));
