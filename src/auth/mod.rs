//! Who is calling: the admin, an org API key with scopes, or a runtime token's user.
//! The API layer's extractors turn a bearer token into a `Principal`; everything
//! below works with the `OrgId` it proves.

pub mod tokens;

use std::collections::HashMap;

use secrecy::SecretString;

use crate::store::api_keys::Scope;
use crate::store::OrgId;

/// An org API key that authenticated.
#[derive(Debug, Clone)]
pub struct KeyCaller {
    pub org: OrgId,
    pub key_id: String,
    pub scopes: Vec<Scope>,
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
    pub credentials: HashMap<String, SecretString>,
    pub token_id: String,
}

/// The caller of a runtime endpoint: a runtime token or an org key with scope `runtime`.
#[derive(Debug, Clone)]
pub enum Caller {
    Key(KeyCaller),
    Runtime(RuntimeCaller),
}

impl Caller {
    pub fn org(&self) -> &OrgId {
        match self {
            Caller::Key(k) => &k.org,
            Caller::Runtime(r) => &r.org,
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
