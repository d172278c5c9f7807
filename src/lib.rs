//! loopgate: executes AI agents' tool calls against business APIs, with a size guard
//! on every response and, where a binding opts in, page walking, fan-out, projection
//! and filtering inside one call. `docs/architecture.md` describes the layers; each
//! module below imports only the ones listed before it (`scripts/check-layers`).

#[cfg(test)]
pub(crate) mod testing;

pub mod telemetry;

pub mod crypto;
pub mod store;

pub mod kv;
pub mod quota;
pub mod upstream;

pub mod auth;
pub mod config;

pub mod results;
pub mod walk;

pub mod call;
pub mod discovery;
pub use loopgate_embedding as embedding;

pub mod mcp;
pub mod openapi_import;
pub mod studio;
pub mod workflow;

pub mod automate;

pub mod api;
pub mod app;

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;

#[cfg(test)]
#[global_allocator]
static ALLOCATOR: loopgate_engine::testing::Counting = loopgate_engine::testing::Counting;
