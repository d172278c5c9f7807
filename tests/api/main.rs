#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One integration binary: every test spawns the real app on port 0 against a real
//! Postgres (a fresh database per test) and, when `REDIS_URL` is set, a real Redis.
//! Run through `scripts/test`, which brings both up.

mod cache;
mod cost;
mod faults;
mod mcp;
mod runtime;
mod security;
mod studio;
mod support;
mod walks;
