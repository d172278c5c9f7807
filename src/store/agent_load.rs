//! An agent as a tool call needs it, in one statement: the agent, its deployment's cache
//! mode, and every binding with the versions (`updated_at`) of its tool and provider, so
//! the runtime takes compiled tools from its per-replica cache and reads a tool's full
//! definition only when it changed ([`crate::call::compiled_tools`]). Each binding carries
//! its provider's org credential, still sealed (opened only by the call that sends it), so
//! a call reads no credential of its own and a rotation is seen by the next call on every
//! replica. For a tool call or a
//! step the same statement reads the caller's thread too (its id, and whether it was used
//! recently), so resolving a thread needs no statement of its own
//! ([`crate::call::threads`]), and, for each connected-app binding, the caller's
//! connection of its toolkit (D4; still sealed, the row a call would otherwise read on its
//! own in [`super::connections::secret`]), so an app tool call reads no connection of its
//! own either; a refresh or a reconnect anywhere is in the next call's statement.
//! A replica that remembers the agent at the org's current config epoch runs none of it
//! ([`crate::call::agent_memory`]).

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::agents::Binding;
use super::connections::Secret;
use super::deployments::CacheMode;
use super::{OrgId, StoreError};
use crate::crypto::Sealed;

/// A binding with the versions of what it binds.
#[derive(Debug, Clone)]
pub struct VersionedBinding {
    pub binding: Binding,
    pub tool_version: DateTime<Utc>,
    pub provider_version: DateTime<Utc>,
    /// The provider's org-level credential as stored (sealed), if it has one.
    pub org_credential: Option<Sealed>,
    /// A connected-app binding's connection of the caller, when connections were read.
    pub connection: Option<SeenConnection>,
    /// P14: what walks learned about the tool's paging ([`super::tool_paging`]), and when
    /// a walk last confirmed it.
    pub paging: Option<(serde_json::Value, DateTime<Utc>)>,
}

/// The caller's connection of an app binding's toolkit, as read with the agent.
#[derive(Debug, Clone)]
pub struct SeenConnection {
    /// The toolkit it was looked up for: the tool's, else its provider's, else the
    /// provider's name (as [`crate::call::offered_tools::toolkit_of`]).
    pub toolkit: String,
    /// The connection (through the binding's provider), `None` when there is none.
    pub row: Option<Secret>,
}

#[derive(Debug, Clone)]
pub struct AgentLoad {
    pub id: String,
    pub instructions: String,
    pub direct_tool_budget: Option<i32>,
    pub token_budget: Option<i32>,
    pub cache: CacheMode,
    pub bindings: Vec<VersionedBinding>,
    /// The looked-up thread, when it exists.
    pub thread: Option<SeenThread>,
}

/// The thread to read with the agent: the caller's (as `threads.caller`) with this key.
#[derive(Debug, Clone, Copy)]
pub struct ThreadLookup<'a> {
    pub caller: &'a str,
    pub key: &'a str,
    /// A thread used less than this long ago is fresh (its `last_used_at` needs no touch).
    pub fresh_within: std::time::Duration,
}

/// A thread as read with its agent.
#[derive(Debug, Clone)]
pub struct SeenThread {
    pub id: String,
    /// Used within [`ThreadLookup::fresh_within`] (by Postgres' clock).
    pub fresh: bool,
    /// How much longer it stays fresh (zero when it is not).
    pub fresh_for: std::time::Duration,
}

struct Row {
    id: String,
    instructions: String,
    direct_tool_budget: Option<i32>,
    token_budget: Option<i32>,
    cache: CacheMode,
    thread_id: Option<String>,
    thread_fresh_secs: Option<f64>,
    tool_id: Option<String>,
    provider_id: Option<String>,
    loop_responses: Option<bool>,
    dataset_ttl_hours: Option<i32>,
    discovery: Option<bool>,
    tool_version: Option<DateTime<Utc>>,
    provider_version: Option<DateTime<Utc>>,
    org_credential: Option<Vec<u8>>,
    app_toolkit: Option<String>,
    conn_id: Option<String>,
    conn_kind: Option<String>,
    conn_secret: Option<Vec<u8>>,
    conn_expires_at: Option<DateTime<Utc>>,
    conn_broken: Option<bool>,
    conn_lifetime: Option<i32>,
    paging_learned: Option<serde_json::Value>,
    paging_confirmed: Option<DateTime<Utc>>,
}

/// The agent `id` of `org` with its versioned bindings, the `thread` looked up (a missing
/// one is `None`) and, with `connections_of` (a connection user,
/// [`crate::auth::Caller::connection_user`]), that user's connection of each app
/// binding's toolkit; `NotFound` when there is no such agent.
pub async fn load(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    thread: Option<ThreadLookup<'_>>,
    connections_of: Option<&str>,
) -> Result<AgentLoad, StoreError> {
    // every column of a LEFT JOINed table is nullable (`?`): an agent has no bindings, a
    // call no thread or connection yet
    let rows = sqlx::query_as!(
        Row,
        r#"SELECT a.id, a.instructions, a.direct_tool_budget, a.token_budget,
             d.cache AS "cache: CacheMode",
             th.id AS "thread_id?",
             EXTRACT(EPOCH FROM th.last_used_at + $5 * interval '1 second' - now())::float8
               AS "thread_fresh_secs?",
             b.tool_id AS "tool_id?", b.provider_id AS "provider_id?",
             b.loop_responses AS "loop_responses?", b.dataset_ttl_hours AS "dataset_ttl_hours?",
             b.discovery AS "discovery?",
             t.updated_at AS "tool_version?", p.updated_at AS "provider_version?",
             p.credential_ciphertext AS "org_credential?",
             CASE WHEN t.kind = 'app' THEN COALESCE(t.toolkit, p.toolkit, p.name) END
               AS "app_toolkit?",
             c.id AS "conn_id?", c.kind AS "conn_kind?", c.secret_ciphertext AS "conn_secret?",
             c.expires_at AS "conn_expires_at?", c.broken AS "conn_broken?",
             c.token_lifetime_seconds AS "conn_lifetime?",
             tp.learned AS "paging_learned?", tp.confirmed_at AS "paging_confirmed?"
           FROM agents a
           JOIN deployments d ON d.org_id = a.org_id AND d.id = a.deployment_id
           LEFT JOIN threads th ON th.org_id = a.org_id AND th.agent_id = a.id
             AND th.caller = $3 AND th.thread_key = $4
           LEFT JOIN agent_tools b ON b.org_id = a.org_id AND b.agent_id = a.id
           LEFT JOIN tools t ON t.org_id = b.org_id AND t.id = b.tool_id
           LEFT JOIN providers p ON p.org_id = b.org_id AND p.id = b.provider_id
           LEFT JOIN connections c ON c.org_id = a.org_id AND c.user_id = $6 AND t.kind = 'app'
             AND c.toolkit = COALESCE(t.toolkit, p.toolkit, p.name) AND c.provider_id = b.provider_id
           LEFT JOIN tool_paging tp ON tp.org_id = b.org_id AND tp.tool_id = b.tool_id
           WHERE a.org_id = $1 AND a.id = $2
           ORDER BY b.position, b.created_at, b.tool_id"#,
        org.as_str(),
        id,
        thread.map(|t| t.caller),
        thread.map(|t| t.key),
        thread.map_or(0.0, |t| t.fresh_within.as_secs_f64()),
        connections_of,
    )
    .fetch_all(pool)
    .await?;
    let Some(first) = rows.first() else {
        return Err(StoreError::NotFound);
    };
    let mut out = AgentLoad {
        id: first.id.clone(),
        instructions: first.instructions.clone(),
        direct_tool_budget: first.direct_tool_budget,
        token_budget: first.token_budget,
        cache: first.cache,
        bindings: Vec::with_capacity(rows.len()),
        thread: first.thread_id.clone().map(|id| {
            let left = first.thread_fresh_secs.unwrap_or(0.0);
            SeenThread {
                id,
                fresh: left > 0.0,
                fresh_for: std::time::Duration::try_from_secs_f64(left).unwrap_or_default(),
            }
        }),
    };
    for r in rows {
        let (Some(tool_id), Some(provider_id), Some(tool_version), Some(provider_version)) =
            (r.tool_id, r.provider_id, r.tool_version, r.provider_version)
        else {
            continue;
        };
        out.bindings.push(VersionedBinding {
            binding: Binding {
                tool_id,
                provider_id,
                loop_responses: r.loop_responses.unwrap_or(false),
                dataset_ttl_hours: r.dataset_ttl_hours,
                discovery: r.discovery,
            },
            tool_version,
            provider_version,
            org_credential: r.org_credential.map(Sealed),
            paging: r.paging_learned.zip(r.paging_confirmed),
            connection: match (connections_of, r.app_toolkit) {
                (Some(_), Some(toolkit)) => Some(SeenConnection {
                    toolkit,
                    row: match (r.conn_id, r.conn_kind, r.conn_secret) {
                        (Some(id), Some(kind), Some(secret_ciphertext)) => Some(Secret {
                            id,
                            kind,
                            secret_ciphertext: Sealed(secret_ciphertext),
                            expires_at: r.conn_expires_at,
                            broken: r.conn_broken.unwrap_or(false),
                            token_lifetime_seconds: r.conn_lifetime,
                        }),
                        _ => None,
                    },
                }),
                _ => None,
            },
        });
    }
    Ok(out)
}
