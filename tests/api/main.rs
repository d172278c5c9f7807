#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One integration binary: every test spawns the real app on port 0 against a real
//! Postgres (a fresh database per test) and a real Redis (`REDIS_URL`). Run through
//! `scripts/test`, which brings both up; a missing service fails the tests that need it
//! (`support::services`, which also names the opt-out).

mod automate;
mod cache;
mod cost;
mod faults;
mod frameworks;
mod mcp;
mod ops;
mod runtime;
mod security;
mod studio;
mod support;
mod walks;
