//! What an agent runtime drives: tool calls and their arguments, the size guard and
//! stored results, steps and tool discovery, threads, runtime tokens, the AI SDK stream,
//! call records, workflow runs, the configured bounds, per-replica agent memory and rate
//! limits.

pub mod agent_memory;
pub mod ai_client;
pub mod arguments;
pub mod call_bodies;
pub mod call_records;
pub mod configured_bounds;
pub mod discovery;
pub mod guard;
pub mod limits;
pub mod quota_leases;
pub mod threads;
pub mod tokens;
pub mod workflows;
