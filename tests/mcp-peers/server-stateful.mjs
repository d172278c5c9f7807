// The official TypeScript MCP SDK as an upstream MCP server (M1), in its documented
// stateful pattern (the SDK's simpleStreamableHttp example): Express, one
// StreamableHTTPServerTransport per session in a map keyed by session id, a new one only
// for an `initialize` without a session id, and `400 Bad Request: No valid session ID
// provided` for any other request (an unknown or stale session id included).
//
// Usage: node server-stateful.mjs [port]   (0 or none: any free port)
// Prints one line `{"port": N}` once it listens. GET /log answers what it saw: every
// HTTP request (method, session id, Authorization, JSON-RPC method, progressToken).
//
// Tools: `list_items` (structured rows), `slow_job` (reports progress 8 times, 300 ms
// apart, on the request's SSE stream, then answers), `broken` (an isError result),
// `batch_export` (listed with execution.taskSupport "required": task-only).
import { randomUUID } from "node:crypto";
import express from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";

const log = [];

const TOOLS = [
  {
    name: "list_items",
    description: "Lists the catalogue's items",
    inputSchema: { type: "object", properties: { prefix: { type: "string" } } },
  },
  {
    name: "slow_job",
    description: "A long job that reports its progress",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "broken",
    description: "Always fails",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "batch_export",
    description: "Exports everything; only as a task",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "required" },
  },
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function getServer() {
  const server = new Server(
    { name: "sdk-peer", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    switch (name) {
      case "list_items": {
        const items = ["apple", "apricot", "banana"]
          .filter((n) => n.startsWith(args.prefix ?? ""))
          .map((n, i) => ({ id: i + 1, name: n }));
        return {
          content: [{ type: "text", text: JSON.stringify({ items }) }],
          structuredContent: { items },
        };
      }
      case "slow_job": {
        const token = request.params._meta?.progressToken;
        const steps = 8;
        for (let i = 1; i <= steps; i++) {
          await sleep(300);
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: i, total: steps, message: `step ${i} of ${steps}` },
            });
          }
        }
        return { content: [{ type: "text", text: JSON.stringify({ done: true, steps }) }] };
      }
      case "broken":
        return { isError: true, content: [{ type: "text", text: "the archive is offline until Monday" }] };
      default:
        return { isError: true, content: [{ type: "text", text: `no tool ${name}` }] };
    }
  });
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
    progressToken: body.params?._meta?.progressToken ?? null,
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

// GET (the optional stream) and DELETE (ending a session), as the example has them
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
