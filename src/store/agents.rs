//! Agents and their tool bindings. Looping is a property of the binding (L1); the
//! binding's provider must be its tool's own provider in the same org (checked here
//! for a clear message, and by a composite foreign key in the schema).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Postgres, Transaction};
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

/// One tool bound to an agent.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, sqlx::FromRow, PartialEq)]
pub struct Binding {
    pub tool_id: String,
    pub provider_id: String,
    /// Walk pages, fan out, project and filter inside one call ("Allow response looping").
    #[serde(default)]
    pub loop_responses: bool,
    /// Overrides how long a cached complete walk stays fresh for this agent, in hours
    /// (1 to 8760).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 8760)]
    pub dataset_ttl_hours: Option<i32>,
    /// `true`: always behind tool search; `false`: always offered directly; unset: by budget.
    #[serde(default)]
    pub discovery: Option<bool>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Agent {
    /// `agt_…`
    pub id: String,
    pub org_id: String,
    pub deployment_id: String,
    pub name: String,
    pub instructions: String,
    /// Tools offered directly before connected-app toolkits go behind tool search
    /// (D1); `null`: the service-wide setting (15 unless configured).
    pub direct_tool_budget: Option<i32>,
    /// The size guard's conversation budget for this agent's results, in tokens (G1);
    /// `null`: the service-wide setting (25,000 unless configured).
    pub token_budget: Option<i32>,
    #[serde(rename = "agentTools")]
    pub agent_tools: Vec<Binding>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    org_id: String,
    deployment_id: String,
    name: String,
    instructions: String,
    direct_tool_budget: Option<i32>,
    token_budget: Option<i32>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl Keyed for Row {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

impl Row {
    fn with(self, agent_tools: Vec<Binding>) -> Agent {
        Agent {
            id: self.id,
            org_id: self.org_id,
            deployment_id: self.deployment_id,
            name: self.name,
            instructions: self.instructions,
            direct_tool_budget: self.direct_tool_budget,
            token_budget: self.token_budget,
            agent_tools,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// The columns of [`Row`], for the list (the static queries spell them out).
const COLUMNS: &str = "id, org_id, deployment_id, name, instructions, direct_tool_budget, \
     token_budget, created_at, updated_at";

/// Checks every binding against the org's tools; the message names the offending entry.
async fn check_bindings(
    tx: &mut Transaction<'_, Postgres>,
    org: &OrgId,
    bindings: &[Binding],
) -> Result<(), StoreError> {
    let ids: Vec<String> = bindings.iter().map(|b| b.tool_id.clone()).collect();
    let owners: HashMap<String, String> = sqlx::query!(
        "SELECT id, provider_id FROM tools WHERE org_id = $1 AND id = ANY($2)",
        org.as_str(),
        &ids,
    )
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|r| (r.id, r.provider_id))
    .collect();
    let mut seen = std::collections::HashSet::new();
    for (i, b) in bindings.iter().enumerate() {
        let Some(provider) = owners.get(&b.tool_id) else {
            return Err(StoreError::Invalid(format!(
                "agentTools[{i}].tool_id '{}' is not a tool of this org",
                b.tool_id
            )));
        };
        if provider != &b.provider_id {
            return Err(StoreError::Invalid(format!(
                "agentTools[{i}].provider_id must be '{provider}', the provider of tool '{}'",
                b.tool_id
            )));
        }
        if !seen.insert(&b.tool_id) {
            return Err(StoreError::Invalid(format!(
                "agentTools[{i}].tool_id '{}' is listed twice",
                b.tool_id
            )));
        }
        if let Some(h) = b.dataset_ttl_hours {
            if !(1..=8760).contains(&h) {
                return Err(StoreError::Invalid(format!(
                    "agentTools[{i}].dataset_ttl_hours must be between 1 and 8760"
                )));
            }
        }
    }
    Ok(())
}

async fn insert_bindings(
    tx: &mut Transaction<'_, Postgres>,
    org: &OrgId,
    agent_id: &str,
    bindings: &[Binding],
) -> Result<(), StoreError> {
    check_bindings(tx, org, bindings).await?;
    for (pos, b) in bindings.iter().enumerate() {
        sqlx::query!(
            "INSERT INTO agent_tools (org_id, agent_id, tool_id, provider_id, loop_responses, \
             dataset_ttl_hours, discovery, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            org.as_str(),
            agent_id,
            &b.tool_id,
            &b.provider_id,
            b.loop_responses,
            b.dataset_ttl_hours,
            b.discovery,
            pos as i32,
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

async fn bindings_of(
    pool: &PgPool,
    org: &OrgId,
    agent_ids: &[String],
) -> Result<HashMap<String, Vec<Binding>>, StoreError> {
    let rows = sqlx::query!(
        "SELECT agent_id, tool_id, provider_id, loop_responses, dataset_ttl_hours, discovery \
         FROM agent_tools WHERE org_id = $1 AND agent_id = ANY($2) \
         ORDER BY position, created_at, tool_id",
        org.as_str(),
        agent_ids,
    )
    .fetch_all(pool)
    .await?;
    let mut out: HashMap<String, Vec<Binding>> = HashMap::new();
    for r in rows {
        out.entry(r.agent_id).or_default().push(Binding {
            tool_id: r.tool_id,
            provider_id: r.provider_id,
            loop_responses: r.loop_responses,
            dataset_ttl_hours: r.dataset_ttl_hours,
            discovery: r.discovery,
        });
    }
    Ok(out)
}

pub struct AgentFields<'a> {
    pub name: &'a str,
    pub deployment_id: &'a str,
    pub instructions: &'a str,
    pub direct_tool_budget: Option<i32>,
    pub token_budget: Option<i32>,
}

fn deployment_error(e: sqlx::Error, deployment_id: &str) -> StoreError {
    match StoreError::from(e) {
        StoreError::Invalid(_) => StoreError::Invalid(format!(
            "deployment_id '{deployment_id}' is not a deployment of this org"
        )),
        other => other,
    }
}

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    f: &AgentFields<'_>,
    bindings: &[Binding],
) -> Result<Agent, StoreError> {
    let mut tx = pool.begin().await?;
    let row = sqlx::query_as!(
        Row,
        "INSERT INTO agents (id, org_id, deployment_id, name, instructions, direct_tool_budget, \
         token_budget) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, org_id, deployment_id, \
         name, instructions, direct_tool_budget, token_budget, created_at, updated_at",
        new_id("agt"),
        org.as_str(),
        f.deployment_id,
        f.name,
        f.instructions,
        f.direct_tool_budget,
        f.token_budget,
    )
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| deployment_error(e, f.deployment_id))?;
    insert_bindings(&mut tx, org, &row.id, bindings).await?;
    tx.commit().await?;
    Ok(row.with(bindings.to_vec()))
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Agent, StoreError> {
    let row = sqlx::query_as!(
        Row,
        "SELECT id, org_id, deployment_id, name, instructions, direct_tool_budget, token_budget, \
         created_at, updated_at FROM agents WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?;
    let mut b = bindings_of(pool, org, std::slice::from_ref(&row.id)).await?;
    let tools = b.remove(&row.id).unwrap_or_default();
    Ok(row.with(tools))
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<Agent>, StoreError> {
    let q = ListQuery {
        from: "agents",
        columns: COLUMNS,
        filters: vec![("org_id", org.as_str())],
    };
    let page = page::list::<Row>(pool, q, req).await?;
    let ids: Vec<String> = page.items.iter().map(|r| r.id.clone()).collect();
    let mut b = bindings_of(pool, org, &ids).await?;
    Ok(page.map(|r| {
        let tools = b.remove(&r.id).unwrap_or_default();
        r.with(tools)
    }))
}

pub struct AgentPatch<'a> {
    pub name: Option<&'a str>,
    pub deployment_id: Option<&'a str>,
    pub instructions: Option<&'a str>,
    /// `Some(None)` returns the agent to the service-wide budget.
    pub direct_tool_budget: Option<Option<i32>>,
    /// `Some(None)` returns the agent to the service-wide size-guard budget.
    pub token_budget: Option<Option<i32>>,
    /// Replaces every binding when set.
    pub agent_tools: Option<&'a [Binding]>,
}

pub async fn update(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    p: &AgentPatch<'_>,
) -> Result<Agent, StoreError> {
    let mut tx = pool.begin().await?;
    let row = sqlx::query_as!(
        Row,
        "UPDATE agents SET name = COALESCE($3, name), deployment_id = COALESCE($4, deployment_id), \
         instructions = COALESCE($5, instructions), \
         direct_tool_budget = CASE WHEN $6 THEN $7 ELSE direct_tool_budget END, \
         token_budget = CASE WHEN $8 THEN $9 ELSE token_budget END, updated_at = now() \
         WHERE org_id = $1 AND id = $2 RETURNING id, org_id, deployment_id, name, instructions, \
         direct_tool_budget, token_budget, created_at, updated_at",
        org.as_str(),
        id,
        p.name,
        p.deployment_id,
        p.instructions,
        p.direct_tool_budget.is_some(),
        p.direct_tool_budget.flatten(),
        p.token_budget.is_some(),
        p.token_budget.flatten(),
    )
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| deployment_error(e, p.deployment_id.unwrap_or_default()))?;
    if let Some(bindings) = p.agent_tools {
        sqlx::query!(
            "DELETE FROM agent_tools WHERE org_id = $1 AND agent_id = $2",
            org.as_str(),
            id,
        )
        .execute(&mut *tx)
        .await?;
        insert_bindings(&mut tx, org, id, bindings).await?;
    }
    tx.commit().await?;
    get(pool, org, &row.id).await
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM agents WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

pub async fn add_binding(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    b: &Binding,
) -> Result<Binding, StoreError> {
    let mut tx = pool.begin().await?;
    let agent = sqlx::query_scalar!(
        "SELECT id FROM agents WHERE org_id = $1 AND id = $2",
        org.as_str(),
        agent_id,
    )
    .fetch_optional(&mut *tx)
    .await?;
    if agent.is_none() {
        return Err(StoreError::NotFound);
    }
    let position = sqlx::query_scalar!(
        r#"SELECT COALESCE(MAX(position), -1) + 1 AS "position!" FROM agent_tools
           WHERE org_id = $1 AND agent_id = $2"#,
        org.as_str(),
        agent_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    check_bindings(&mut tx, org, std::slice::from_ref(b)).await?;
    sqlx::query!(
        "INSERT INTO agent_tools (org_id, agent_id, tool_id, provider_id, loop_responses, \
         dataset_ttl_hours, discovery, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        org.as_str(),
        agent_id,
        &b.tool_id,
        &b.provider_id,
        b.loop_responses,
        b.dataset_ttl_hours,
        b.discovery,
        position,
    )
    .execute(&mut *tx)
    .await
    .map_err(|e| match StoreError::from(e) {
        StoreError::Conflict(_) => StoreError::Conflict(format!(
            "tool '{}' is already bound to this agent: PATCH the binding instead",
            b.tool_id
        )),
        other => other,
    })?;
    tx.commit().await?;
    Ok(b.clone())
}

pub async fn get_binding(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    tool_id: &str,
) -> Result<Binding, StoreError> {
    Ok(sqlx::query_as!(
        Binding,
        "SELECT tool_id, provider_id, loop_responses, dataset_ttl_hours, discovery \
         FROM agent_tools WHERE org_id = $1 AND agent_id = $2 AND tool_id = $3",
        org.as_str(),
        agent_id,
        tool_id,
    )
    .fetch_one(pool)
    .await?)
}

/// `None` leaves a field as it is; `Some(None)` clears a nullable one.
pub struct BindingPatch {
    pub loop_responses: Option<bool>,
    pub dataset_ttl_hours: Option<Option<i32>>,
    pub discovery: Option<Option<bool>>,
}

pub async fn update_binding(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    tool_id: &str,
    p: &BindingPatch,
) -> Result<Binding, StoreError> {
    Ok(sqlx::query_as!(
        Binding,
        "UPDATE agent_tools SET loop_responses = COALESCE($4, loop_responses), \
         dataset_ttl_hours = CASE WHEN $5 THEN $6 ELSE dataset_ttl_hours END, \
         discovery = CASE WHEN $7 THEN $8 ELSE discovery END, updated_at = now() \
         WHERE org_id = $1 AND agent_id = $2 AND tool_id = $3 \
         RETURNING tool_id, provider_id, loop_responses, dataset_ttl_hours, discovery",
        org.as_str(),
        agent_id,
        tool_id,
        p.loop_responses,
        p.dataset_ttl_hours.is_some(),
        p.dataset_ttl_hours.flatten(),
        p.discovery.is_some(),
        p.discovery.flatten(),
    )
    .fetch_one(pool)
    .await?)
}

pub async fn remove_binding(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    tool_id: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM agent_tools WHERE org_id = $1 AND agent_id = $2 AND tool_id = $3",
        org.as_str(),
        agent_id,
        tool_id,
    )
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
