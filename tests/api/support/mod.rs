//! Test support (its one test: the Redis proxy reads commands whole): `spawn_app` and the
//! client, tenant rigs, in-test upstreams (paginating, misbehaving, OAuth, MCP), counters
//! of what the app sends to Postgres and Redis on the wire, Postgres/Redis instances of a
//! test's own, and the rule for a missing service (`services`).

pub mod cursor_rig;
pub mod cursor_servers;
pub mod fault_server;
pub mod helpers;
pub mod mcp_upstream;
pub mod oauth_peer;
pub mod oauth_server;
pub mod redis_count;
pub mod rig;
pub mod sdk_peer;
pub mod services;
pub mod slow_upstream;
pub mod sql_count;
pub mod temp_services;
pub mod upstream_server;
pub mod wire_proxy;
