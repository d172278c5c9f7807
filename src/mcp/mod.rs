//! MCP both ways (M1, M2). [`sync`]: an MCP server registered as a provider becomes
//! a source of tools of kind `mcp` (M1; its calls go through the runtime like any tool,
//! the wire protocol lives in `upstream::mcp`). [`server`]: every agent served as an MCP
//! server over streamable HTTP (M2), its tools being exactly the thread's `steps` answer;
//! [`tasks`]: its `tools/call` answered as a task when the client asks (M3).

pub mod rpc;
pub mod server;
pub mod sync;
pub mod tasks;
