//! Authorization servers' metadata (D4) as this replica keeps it: per issuer, for
//! `oauth_metadata_ttl_seconds`, at most 1024 issuers. Fetched and checked by
//! [`super::oauth_metadata`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

/// What loopgate reads of a server's metadata.
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: Option<String>,
    pub revocation_endpoint: Option<String>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// Discovered metadata per issuer, each kept for the TTL.
pub struct MetadataCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, Arc<Metadata>)>>,
}

impl Default for MetadataCache {
    fn default() -> Self {
        Self::new(Duration::from_secs(3600))
    }
}

impl MetadataCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn get(&self, issuer: &str) -> Option<Arc<Metadata>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(issuer)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, m)| m.clone())
    }

    pub(super) fn put(&self, issuer: &str, m: Arc<Metadata>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        // a bounded map: expired entries go first, then (past 1024) all
        entries.retain(|_, (at, _)| at.elapsed() < self.ttl);
        if entries.len() >= 1024 {
            entries.clear();
        }
        entries.insert(issuer.to_string(), (Instant::now(), m));
    }
}
