//! The audit trail: one row per write to an org's configuration (who, what, which
//! resource, the changed fields before and after), listed newest first per org and
//! filtered by resource or actor. Rows are written by `api::audit` only, and pruned by
//! age (`retention`, `Table::AuditEvents`). `changes` arrives already redacted
//! (`audit_changes`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

/// Who made a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Actor {
    /// `api_key`, `admin` or `runtime_token`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The key's or the token's id; `admin` for the admin token.
    pub id: String,
}

impl Actor {
    pub fn api_key(id: &str) -> Self {
        Actor {
            kind: "api_key",
            id: id.to_string(),
        }
    }
    pub fn admin() -> Self {
        Actor {
            kind: "admin",
            id: "admin".to_string(),
        }
    }
    pub fn runtime_token(id: &str) -> Self {
        Actor {
            kind: "runtime_token",
            id: id.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Delete,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
        }
    }
}

/// What was written to.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Resource {
    /// `provider`, `tool`, `agent`, `binding`, `deployment`, `api_key`, `workflow`,
    /// `connection`, `schedule`, `webhook_endpoint`, `org`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// One write, as listed by `GET /v1/audit-events`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditEvent {
    /// `aud_…`
    pub id: String,
    pub actor: Actor,
    /// `create`, `update` or `delete`.
    pub action: String,
    pub resource: Resource,
    /// `{<field>: {before, after}}`; a secret field's value is `"[secret]"`.
    #[schema(value_type = Object)]
    pub changes: Value,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    actor_type: String,
    actor_id: String,
    action: String,
    resource_type: String,
    resource_id: String,
    changes: Json<Value>,
    created_at: DateTime<Utc>,
}

impl Keyed for Row {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

fn actor_kind(stored: &str) -> &'static str {
    match stored {
        "admin" => "admin",
        "runtime_token" => "runtime_token",
        _ => "api_key",
    }
}

impl From<Row> for AuditEvent {
    fn from(r: Row) -> Self {
        AuditEvent {
            id: r.id,
            actor: Actor {
                kind: actor_kind(&r.actor_type),
                id: r.actor_id,
            },
            action: r.action,
            resource: Resource {
                kind: r.resource_type,
                id: r.resource_id,
            },
            changes: r.changes.0,
            created_at: r.created_at,
        }
    }
}

const COLUMNS: &str =
    "id, actor_type, actor_id, action, resource_type, resource_id, changes, created_at";

/// Records one event per `(resource_id, changes)` of `events`, in one statement (an
/// OpenAPI import creates hundreds of tools at once).
pub async fn insert(
    pool: &PgPool,
    org: &OrgId,
    actor: &Actor,
    action: Action,
    resource_type: &str,
    events: Vec<(String, Map<String, Value>)>,
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = events.iter().map(|_| new_id("aud")).collect();
    let (resources, changes): (Vec<String>, Vec<Value>) = events
        .into_iter()
        .map(|(r, c)| (r, Value::Object(c)))
        .unzip();
    sqlx::query!(
        "INSERT INTO audit_events (id, org_id, actor_type, actor_id, action, resource_type, resource_id, changes) \
         SELECT e.id, $2, $3, $4, $5, $6, e.resource_id, e.changes \
         FROM UNNEST($1::text[], $7::text[], $8::jsonb[]) AS e (id, resource_id, changes)",
        &ids[..],
        org.as_str(),
        actor.kind,
        &actor.id,
        action.as_str(),
        resource_type,
        &resources[..],
        &changes[..],
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The org's events, newest first, optionally only those on one resource or by one actor.
pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    resource_id: Option<&str>,
    actor_id: Option<&str>,
    req: &PageRequest,
) -> Result<ListPage<AuditEvent>, StoreError> {
    let mut filters = vec![("org_id", org.as_str())];
    if let Some(r) = resource_id {
        filters.push(("resource_id", r));
    }
    if let Some(a) = actor_id {
        filters.push(("actor_id", a));
    }
    let q = ListQuery {
        from: "audit_events",
        columns: COLUMNS,
        filters,
    };
    Ok(page::list::<Row>(pool, q, req).await?.map(AuditEvent::from))
}
