#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One integration binary: every test spawns the real app on port 0 against a real
//! Postgres (a fresh database per test) and, when `REDIS_URL` is set, a real Redis.
//! Run through `scripts/test`, which brings both up.

mod cursor_servers;
mod fault_server;
mod helpers;
mod mcp_upstream;
mod oauth_server;
mod rig;
mod sql_count;
mod temp_services;
mod upstream_server;

mod admin;
mod agents;
mod aggregates;
mod arguments;
mod auth_hardening;
mod auth_matrix;
mod cache;
mod configured_bounds;
mod connections;
mod cpu_jobs;
mod cursor_hostile;
mod cursor_rig;
mod cursor_walks;
mod dependencies;
mod discovery;
mod errors;
mod exact_apis;
mod faults;
mod first_run;
mod hardening;
mod isolation;
mod mcp_providers;
mod mcp_server;
mod openapi_doc;
mod openapi_import;
mod org_credentials;
mod pagination;
mod parallel_walks;
mod providers;
mod redis_ttls;
mod replicas;
mod resume;
mod retention;
mod runtime_ai_client;
mod runtime_guard;
mod runtime_limits;
mod runtime_resilience;
mod runtime_tokens;
mod runtime_walks;
mod secrets;
mod sql_per_call;
mod threads;
mod workflows_run;
