// The official TypeScript MCP SDK as an upstream MCP server (M1) whose tools answer with
// more than text, for the tests of loopgate's own MCP server (M2): the SDK's stateless
// pattern (a new server and transport per request, no session ids).
//
// Usage: node server-rich.mjs [port]   (0 or none: any free port)
// Prints one line `{"port": N}` once it listens.
//
// Tools: `snapshot` (a text, an image, an audio clip, an embedded resource and a
// resource link; listed with a title and annotations) and `stats` (structured content
// that its outputSchema describes, no other key allowed; `day: "year"` adds 8,760 hourly
// rows, a result loopgate's size guard cuts).
import express from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

// a 1×1 PNG and a few bytes standing for a WAV clip
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

const TOOLS = [
  {
    name: "snapshot",
    title: "Dashboard snapshot",
    description: "A picture of the dashboard, its alert sound and its data",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false, title: "Snapshot (annotation)" },
  },
  {
    name: "stats",
    title: "Visitor statistics",
    description: "Counts of visitors",
    inputSchema: { type: "object", properties: { day: { type: "string" } } },
    outputSchema: {
      type: "object",
      properties: {
        day: { type: "string" },
        visitors: { type: "integer" },
        hours: { type: "array", items: { type: "object", properties: { hour: { type: "integer" }, visitors: { type: "integer" } } } },
      },
      required: ["day", "visitors"],
      additionalProperties: false,
    },
    annotations: { idempotentHint: true },
  },
];

function getServer() {
  const server = new Server({ name: "sdk-rich", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {} } = request.params;
    switch (name) {
      case "snapshot":
        return {
          content: [
            { type: "text", text: "Dashboard at noon" },
            { type: "image", data: PNG, mimeType: "image/png" },
            { type: "audio", data: WAV, mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///dash/data.csv", mimeType: "text/csv", text: "day,visitors\nmon,3\n" } },
            { type: "resource_link", uri: "file:///dash/full.csv", name: "full.csv", mimeType: "text/csv" },
          ],
        };
      case "stats": {
        const out = { day: args.day ?? "mon", visitors: 42 };
        // `day: "year"`: every hour of a year, more than loopgate's size guard lets through
        if (args.day === "year") out.hours = Array.from({ length: 8760 }, (_, hour) => ({ hour, visitors: hour % 7 }));
        return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
      }
      default:
        return { isError: true, content: [{ type: "text", text: `no tool ${name}` }] };
    }
  });
  return server;
}

const app = express();
app.use(express.json({ limit: "4mb" }));
app.post("/mcp", async (req, res) => {
  const server = getServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.get("/mcp", (_req, res) => res.status(405).set("allow", "POST").end());
app.delete("/mcp", (_req, res) => res.status(405).set("allow", "POST").end());

const port = Number(process.argv[2] ?? 0);
const listener = app.listen(port, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: listener.address().port }) + "\n");
});
process.on("SIGTERM", () => process.exit(0));
