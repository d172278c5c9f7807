//! Who may read what: the auth matrix from the OpenAPI document, token revocation and
//! throttling, tenant isolation, bounded argument lists, secrets that never leak, sealed
//! org credentials and connections read with the agent.

pub mod app_connections;
pub mod auth_hardening;
pub mod auth_matrix;
pub mod control_ids;
pub mod hardening;
pub mod isolation;
pub mod org_credentials;
pub mod secrets;
