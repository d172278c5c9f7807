// The MCP reference server, `@modelcontextprotocol/server-everything` (pinned in
// package.json), as an upstream MCP server: its own streamable HTTP transport
// (`dist/transports/streamableHttp.js`, the `streamableHttp` mode of its launcher), run
// on the port given (0 or none: any free port). M3: its `simulate-research-query` tool
// can only run as a task (execution.taskSupport "required").
//
// Usage: node server-everything.mjs [port]
// Prints one line `{"port": N}` once it listens, as every peer here does; the server's
// chatter on stdout is dropped (its errors still go to stderr).
import http from "node:http";

console.log = () => {};
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    process.stdout.write(`${JSON.stringify({ port: this.address().port })}\n`);
  });
  return listen.apply(this, args);
};
process.env.PORT = process.argv[2] ?? "0";
await import("@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js");
