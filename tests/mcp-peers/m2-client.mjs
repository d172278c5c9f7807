// The official TypeScript MCP SDK as a *client* of loopgate's MCP server (M2): connects
// to an agent's endpoint with StreamableHTTPClientTransport and a bearer token, lists
// the tools, calls one, ends the session (transport.terminateSession()), then sends a
// request naming the ended session itself and reports the status it got.
//
// Usage: node m2-client.mjs <endpoint url> <bearer token> <tool name> [arguments as JSON]
// Prints one JSON line: {protocolVersion, sessionId, tools, call, terminated, afterEnd}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, args = "{}"] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };

const client = new Client({ name: "loopgate-m2-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
await client.connect(transport);
const sessionId = transport.sessionId;
const protocolVersion = transport.protocolVersion ?? null;

const { tools } = await client.listTools();
const call = await client.callTool({ name: tool, arguments: JSON.parse(args) });

await transport.terminateSession();
const terminated = transport.sessionId === undefined;

// the ended session, named once more: the spec's answer is 404
const after = await fetch(url, {
  method: "POST",
  headers: {
    ...headers,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-session-id": sessionId,
    ...(protocolVersion ? { "mcp-protocol-version": protocolVersion } : {}),
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/list" }),
});
await client.close();

process.stdout.write(
  JSON.stringify({ protocolVersion, sessionId, tools, call, terminated, afterEnd: after.status }) + "\n",
);
