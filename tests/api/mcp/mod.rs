//! MCP both ways: an MCP server as a provider (M1) and an agent served as an MCP server
//! (M2).

pub mod lifecycle;
pub mod providers;
pub mod sdk_client;
pub mod sdk_server;
pub mod server;
