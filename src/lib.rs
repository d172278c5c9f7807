//! loopgate: executes AI agents' tool calls against business APIs, with a size guard
//! on every response and, where a binding opts in, page walking, fan-out, projection
//! and filtering inside one call. See `README.md` and `../shared/DESIGN.md` for the layers.

pub mod api;
pub mod auth;
pub mod bounds;
pub mod crypto;
pub mod discovery;
pub mod engine;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod mcp;
pub mod metrics;
pub mod openapi_import;
pub mod quota;
pub mod retention;
pub mod runtime;
pub mod settings;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
#[cfg(test)]
pub(crate) mod test_services;
#[cfg(test)]
mod testalloc;
pub mod upstream;
pub mod workflow;
