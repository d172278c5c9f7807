//! The audit trail's one writer and its list route. Every handler that writes an org's
//! configuration (providers, credentials, tools, agents and their bindings,
//! deployments, API keys, workflows, connections, schedules, webhook endpoints) calls [`record`] once its write
//! succeeded, with the resource as the API shows it before and after; the changed
//! fields are computed and redacted in one place (`store::audit_changes`), so a secret
//! reaches the trail only as `"[secret]"`. A write the trail fails to record answers
//! 5xx (the write stands; repeating a PATCH is harmless), so an operator sees the gap.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;

use super::error::{ApiError, Problem};
use super::extract::{AdminOrg, OrgKey, Studio};
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::store::audit_changes::changes;
use crate::store::audit_events::{self, Action, Actor, AuditEvent};
use crate::store::OrgId;

/// Whoever an extractor proved the caller to be, as the trail names them.
pub trait Acting {
    fn actor(&self) -> Actor;
}

impl<S> Acting for OrgKey<S> {
    fn actor(&self) -> Actor {
        Actor::api_key(&self.key_id)
    }
}

impl Acting for AdminOrg {
    fn actor(&self) -> Actor {
        Actor::admin()
    }
}

/// One write to record: what kind of resource, which one, and how.
pub struct Write<'a> {
    pub org: &'a OrgId,
    pub actor: Actor,
    /// `provider`, `tool`, `agent`, `binding`, `deployment`, `api_key`, `workflow`,
    /// `connection`, `schedule`, `webhook_endpoint`.
    pub resource: &'static str,
    pub id: &'a str,
    pub action: Action,
}

fn json<T: Serialize>(v: Option<&T>) -> Result<Option<serde_json::Value>, ApiError> {
    v.map(serde_json::to_value)
        .transpose()
        .map_err(|e| ApiError::Internal(e.into()))
}

/// Records `w` with the resource `before` and `after` it (absent for a create or a
/// delete). `secrets_written` names secret fields the write set that the resource as
/// shown does not carry (`credential`), with whether one was held before. An update
/// that changed nothing is not recorded.
pub async fn record<B: Serialize, A: Serialize>(
    state: &AppState,
    w: Write<'_>,
    before: Option<&B>,
    after: Option<&A>,
    secrets_written: &[(&str, bool)],
) -> Result<(), ApiError> {
    let c = changes(
        json(before)?.as_ref(),
        json(after)?.as_ref(),
        secrets_written,
    );
    if c.is_empty() && w.action == Action::Update {
        return Ok(());
    }
    let events = vec![(w.id.to_string(), c)];
    audit_events::insert(&state.pool, w.org, &w.actor, w.action, w.resource, events)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, resource = w.resource, "audit event not recorded");
            ApiError::from(e)
        })
}

/// Many creates of one kind at once (an import), each `(id, resource)`.
pub async fn created_many<A: Serialize>(
    state: &AppState,
    org: &OrgId,
    actor: Actor,
    resource: &'static str,
    created: &[(&str, &A)],
) -> Result<(), ApiError> {
    let events = created
        .iter()
        .map(|(id, after)| {
            Ok((
                id.to_string(),
                changes(None, json(Some(after))?.as_ref(), &[]),
            ))
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    audit_events::insert(&state.pool, org, &actor, Action::Create, resource, events)
        .await
        .map_err(ApiError::from)
}

/// A create: every field of `after`.
pub async fn created<A: Serialize>(
    state: &AppState,
    org: &OrgId,
    actor: Actor,
    (resource, id): (&'static str, &str),
    after: &A,
    secrets_written: &[(&str, bool)],
) -> Result<(), ApiError> {
    let w = Write {
        org,
        actor,
        resource,
        id,
        action: Action::Create,
    };
    record::<A, A>(state, w, None, Some(after), secrets_written).await
}

/// An update: the fields that differ between `before` and `after`.
pub async fn updated<T: Serialize>(
    state: &AppState,
    org: &OrgId,
    actor: Actor,
    (resource, id): (&'static str, &str),
    before: &T,
    after: &T,
    secrets_written: &[(&str, bool)],
) -> Result<(), ApiError> {
    let w = Write {
        org,
        actor,
        resource,
        id,
        action: Action::Update,
    };
    record(state, w, Some(before), Some(after), secrets_written).await
}

/// A delete: every field of `before` (or none when it was not read first).
pub async fn deleted<B: Serialize>(
    state: &AppState,
    org: &OrgId,
    actor: Actor,
    (resource, id): (&'static str, &str),
    before: Option<&B>,
) -> Result<(), ApiError> {
    let w = Write {
        org,
        actor,
        resource,
        id,
        action: Action::Delete,
    };
    record::<B, B>(state, w, before, None, &[]).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditFilter {
    /// Only writes to this resource (a provider, tool, agent, deployment, key, workflow
    /// or connection id; a binding is `<agent_id>/<tool_id>`).
    pub resource_id: Option<String>,
    /// Only writes by this actor (an API key's id, `admin`, or a runtime token's id).
    pub actor_id: Option<String>,
}

/// List the org's audit events: every write made to its configuration.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
/// Each event names its actor, action and resource, with the changed fields before and
/// after; a secret field's value is `"[secret]"`, never the secret.
#[utoipa::path(get, operation_id = "listAuditEvents", path = "/v1/audit-events", tag = "studio",
    params(ListParams, AuditFilter),
    responses((status = 200, body = ListResponse<AuditEvent>, example = json!({"data": [{"id": "aud_PjuidnyN8dtjgle3elgSLM", "actor": {"type": "api_key", "id": "key_yhR1tyfzsmkM9JNsUzUkoU"}, "action": "update", "resource": {"type": "webhook_endpoint", "id": "whe_3U1VpduByp7xw4kBaOiAY7"}, "changes": {"secret": {"after": "[secret]", "before": "[secret]"}}, "created_at": "2026-12-07T21:28:54.795385Z"}, {"id": "aud_asGeRzvaSgGBp5Ael5rrUE", "actor": {"type": "api_key", "id": "key_yhR1tyfzsmkM9JNsUzUkoU"}, "action": "update", "resource": {"type": "webhook_endpoint", "id": "whe_3U1VpduByp7xw4kBaOiAY7"}, "changes": {"description": {"after": "Nightly report of open items", "before": "Nightly report"}}, "created_at": "2026-12-07T21:28:54.769231Z"}], "has_more": false, "cursor": null, "total": 21})), (status = 400, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
    f: web::Query<AuditFilter>,
) -> Result<HttpResponse, ApiError> {
    let page = audit_events::list(
        &state.pool,
        &key.org,
        f.resource_id.as_deref().filter(|s| !s.is_empty()),
        f.actor_id.as_deref().filter(|s| !s.is_empty()),
        &q.page()?,
    )
    .await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}
