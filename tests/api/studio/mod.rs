//! The Studio and admin surface: orgs, API keys, deployments, providers, tools and
//! agents, connections, OpenAPI import and the served document, problem+json errors,
//! first start of the binary, retention, the Studio console (`/studio`).

pub mod admin;
pub mod agents;
pub mod audit;
pub mod connections;
pub mod connections_d4;
pub mod console;
pub mod errors;
pub mod first_run;
pub mod import_limits;
pub mod oauth_peer;
pub mod openapi_doc;
pub mod openapi_import;
pub mod providers;
pub mod retention;
