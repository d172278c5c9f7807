//! The credential a walk sends, and the cache scope and lifetime that follow from it
//! (C2, C3): whose data a walk reads decides who may be served it from the cache. Which
//! credential a call uses is decided above, in `call::credential_choice`.

use secrecy::SecretString;

use crate::auth::Caller;
use crate::results::dataset_cache;

/// Which credential a call uses.
pub enum Credential {
    /// The runtime token's own secret for this provider.
    User(SecretString),
    /// The org-level secret, if one is stored.
    Org(Option<SecretString>),
    /// The calling user's connection of a connected-app toolkit (D4).
    Connection(SecretString),
}

impl Credential {
    pub fn secret(&self) -> Option<&SecretString> {
        match self {
            Credential::User(s) | Credential::Connection(s) => Some(s),
            Credential::Org(s) => s.as_ref(),
        }
    }
}

/// C2, C3: whose data this is, and how long a walk of it stays fresh for this binding.
pub(crate) fn cache_scope(
    caller: &Caller,
    credential: &Credential,
    ttl_hours: Option<i32>,
) -> (dataset_cache::Scope, std::time::Duration) {
    let (scope, default_ttl) = match (caller, credential) {
        (Caller::Runtime(r), Credential::User(_)) => (
            match &r.cache_scope {
                Some(s) => dataset_cache::Scope::Shared(s.clone()),
                None => dataset_cache::Scope::User(r.user_id.clone()),
            },
            dataset_cache::USER_TTL,
        ),
        // D4: a connection is the user's own, whatever the token's cache_scope
        (_, Credential::Connection(_)) => (
            dataset_cache::Scope::User(caller.connection_user()),
            dataset_cache::USER_TTL,
        ),
        _ => (dataset_cache::Scope::Org, dataset_cache::ORG_TTL),
    };
    let ttl = ttl_hours
        .filter(|h| *h > 0)
        .map(|h| std::time::Duration::from_secs(h as u64 * 3600))
        .unwrap_or(default_ttl);
    (scope, ttl)
}
