//! The process-wide state every handler reaches through `web::Data<AppState>`.

use std::sync::Arc;

use secrecy::SecretString;
use sqlx::PgPool;

use crate::auth::tokens::TokenService;
use crate::call::Runtime;
use crate::config::settings::Settings;
use crate::crypto::Cipher;
use crate::quota::org::OrgRequests;
use crate::quota::Shared;
use crate::telemetry::metrics::Metrics;

pub struct AppState {
    pub pool: PgPool,
    pub redis: Option<crate::kv::Redis>,
    pub cipher: Cipher,
    pub tokens: TokenService,
    pub admin_token: SecretString,
    pub settings: Settings,
    pub metrics: Arc<Metrics>,
    pub runtime: Runtime,
    /// Requests per second per org on loopgate's own API (all replicas together).
    pub org_limiter: OrgRequests,
    /// Quota state shared by the replicas (and whether it currently falls back).
    pub quota: Arc<Shared>,
    /// Failed-authentication throttle and the key / token liveness caches.
    pub auth_guard: crate::auth::guard::AuthGuard,
    /// OpenAPI imports run one at a time on a replica: a large document and its parsed
    /// form are the most a request can make the process hold.
    pub import_turns: Arc<tokio::sync::Semaphore>,
}

impl crate::automate::HasRuntime for AppState {
    fn runtime(&self) -> &Runtime {
        &self.runtime
    }
}
