//! Who is calling: the admin, an org API key with scopes, or a runtime token's user.
//! The API layer's extractors turn a bearer token into a `Principal`; everything
//! below works with the `OrgId` it proves.

pub mod guard;
pub mod proxies;
pub mod tokens;
pub mod verified;

use std::collections::HashMap;

use secrecy::SecretString;

use crate::store::api_keys::Scope;
use crate::store::providers::CredentialBinding;
use crate::store::OrgId;

/// An org API key that authenticated.
#[derive(Debug, Clone)]
pub struct KeyCaller {
    pub org: OrgId,
    pub key_id: String,
    pub scopes: Vec<Scope>,
}

/// A user's own credential for one provider, carried (sealed) in a runtime token with
/// where it may go: it is sent only while the provider's [`CredentialBinding`] is the one
/// it had when the token was minted.
#[derive(Debug, Clone)]
pub struct UserCredential {
    pub secret: SecretString,
    /// `None` in a token minted before bindings were sealed in: such a credential is
    /// never sent.
    pub binding: Option<CredentialBinding>,
}

/// A runtime token's holder: a customer's end user, acting within one org.
#[derive(Debug, Clone)]
pub struct RuntimeCaller {
    pub org: OrgId,
    pub user_id: String,
    /// When set, the token only works for this agent.
    pub agent_id: Option<String>,
    /// Tenant-wide cache scope asserted by the customer backend at mint time.
    pub cache_scope: Option<String>,
    /// The user's own credentials, by provider id (decrypted only in memory).
    pub credentials: HashMap<String, UserCredential>,
    pub token_id: String,
    /// The API key that minted the token (revoking it revokes the token).
    pub minted_by: String,
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// The caller of a runtime endpoint: a runtime token or an org key with scope `runtime`.
#[derive(Debug, Clone)]
pub enum Caller {
    Key(KeyCaller),
    Runtime(RuntimeCaller),
}

impl Caller {
    /// Whose connections a caller uses: the runtime token's user, or the org key itself
    /// (`key:` + its id; a runtime token's `user_id` may not start with `key:`, so the two
    /// never meet).
    pub fn connection_user(&self) -> String {
        match self {
            Caller::Runtime(r) => r.user_id.clone(),
            Caller::Key(k) => format!("key:{}", k.key_id),
        }
    }

    pub fn org(&self) -> &OrgId {
        match self {
            Caller::Key(k) => &k.org,
            Caller::Runtime(r) => &r.org,
        }
    }

    /// Whether this caller may act on (or read what was done on) `agent_id`: a runtime
    /// token limited to one agent reaches no other.
    pub fn allows_agent(&self, agent_id: &str) -> bool {
        match self {
            Caller::Runtime(r) => r.agent_id.as_deref().is_none_or(|a| a == agent_id),
            Caller::Key(_) => true,
        }
    }

    /// The thread owner: `user:<id>` for a runtime token, `key:<id>` for an org key.
    pub fn thread_owner(&self) -> String {
        match self {
            Caller::Key(k) => format!("key:{}", k.key_id),
            Caller::Runtime(r) => format!("user:{}", r.user_id),
        }
    }
}
