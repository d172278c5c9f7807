//! Tool-call records, read back by the same caller (`GET /v1/tool-calls/{id}`), so a
//! disconnect loses nothing. A streamed call is written when it starts (`running`, its id
//! is in the stream's first chunks and may be followed) and updated when it ends; a call
//! whose id nobody learns before it ends is written once, finished ([`Write`]). Writes are
//! put together into one statement ([`write_all`]) by each replica's writer
//! (`runtime::records`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::{OrgId, StoreError};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct ToolCallRecord {
    /// `call_…`
    pub id: String,
    pub agent_id: String,
    pub name: String,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
    /// What entered the conversation (any JSON), once succeeded.
    #[schema(value_type = Option<Value>)]
    pub result: Option<Json<Value>>,
    /// The problem document, once failed.
    #[schema(value_type = Option<Object>)]
    pub error: Option<Json<Value>>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Who made a call, in which thread, with what (owned: it travels to the writer).
#[derive(Debug, Clone)]
pub struct NewCall {
    pub id: String,
    pub agent_id: String,
    pub thread_id: String,
    pub caller: String,
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

/// How a call ended: the result's JSON text, or the problem document's.
#[derive(Debug, Clone)]
pub enum Outcome {
    Succeeded(String),
    Failed(String),
}

impl Outcome {
    fn columns(&self) -> (&'static str, Option<&str>, Option<&str>) {
        match self {
            Outcome::Succeeded(r) => ("succeeded", Some(r), None),
            Outcome::Failed(e) => ("failed", None, Some(e)),
        }
    }
    fn len(&self) -> usize {
        match self {
            Outcome::Succeeded(t) | Outcome::Failed(t) => t.len(),
        }
    }
}

/// One write of one call's record; [`write_all`] puts many into one statement. Each
/// carries its org, and a finish matches its row by org and id.
#[derive(Debug)]
pub enum Write {
    /// A streamed call starts: its `running` row (`created_at` now).
    Start { org: OrgId, call: NewCall },
    /// A streamed call ends (`finished_at` now).
    Finish {
        org: OrgId,
        id: String,
        outcome: Outcome,
    },
    /// A call that is over, written once: its finished row.
    Once {
        org: OrgId,
        call: NewCall,
        outcome: Outcome,
        started_at: DateTime<Utc>,
        finished_at: DateTime<Utc>,
    },
}

impl Write {
    /// The bytes it sends (what bounds a batch).
    pub fn bytes(&self) -> usize {
        let call = |c: &NewCall| {
            c.id.len() + c.agent_id.len() + c.thread_id.len() + c.arguments.len() + 64
        };
        match self {
            Write::Start { call: c, .. } => call(c),
            Write::Finish { id, outcome, .. } => id.len() + outcome.len() + 64,
            Write::Once {
                call: c, outcome, ..
            } => call(c) + outcome.len(),
        }
    }
}

/// The columns of a batch's inserted rows and finished calls, one array each.
#[derive(Default)]
struct Columns<'a> {
    ids: Vec<&'a str>,
    orgs: Vec<&'a str>,
    agents: Vec<&'a str>,
    threads: Vec<&'a str>,
    callers: Vec<&'a str>,
    names: Vec<&'a str>,
    arguments: Vec<&'a str>,
    statuses: Vec<&'a str>,
    results: Vec<Option<&'a str>>,
    errors: Vec<Option<&'a str>>,
    created: Vec<Option<DateTime<Utc>>>,
    finished: Vec<Option<DateTime<Utc>>>,
}

impl<'a> Columns<'a> {
    fn row(
        &mut self,
        org: &'a OrgId,
        c: &'a NewCall,
        end: Option<(&'a Outcome, DateTime<Utc>, DateTime<Utc>)>,
    ) {
        let (status, result, error) = end.map_or(("running", None, None), |e| e.0.columns());
        self.ids.push(&c.id);
        self.orgs.push(org.as_str());
        self.agents.push(&c.agent_id);
        self.threads.push(&c.thread_id);
        self.callers.push(&c.caller);
        self.names.push(&c.name);
        self.arguments.push(&c.arguments);
        self.statuses.push(status);
        self.results.push(result);
        self.errors.push(error);
        self.created.push(end.map(|e| e.1));
        self.finished.push(end.map(|e| e.2));
    }
}

/// Every write in one statement (one round trip, one transaction): the new rows inserted
/// and the running calls' ends updated, matched by org and id. All or nothing.
pub async fn write_all(pool: &PgPool, writes: &[Write]) -> Result<(), StoreError> {
    let mut new = Columns::default();
    let mut ends = Columns::default();
    for w in writes {
        match w {
            Write::Start { org, call } => new.row(org, call, None),
            Write::Once {
                org,
                call,
                outcome,
                started_at,
                finished_at,
            } => new.row(org, call, Some((outcome, *started_at, *finished_at))),
            Write::Finish { org, id, outcome } => {
                let (status, result, error) = outcome.columns();
                ends.orgs.push(org.as_str());
                ends.ids.push(id);
                ends.statuses.push(status);
                ends.results.push(result);
                ends.errors.push(error);
            }
        }
    }
    sqlx::query(
        "WITH new AS (\
           INSERT INTO tool_calls (id, org_id, agent_id, thread_id, caller, name, arguments, status, \
             result, error, created_at, finished_at) \
           SELECT n.id, n.org_id, n.agent_id, n.thread_id, n.caller, n.name, n.arguments::jsonb, \
             n.status, n.result::json, n.error::jsonb, COALESCE(n.created_at, now()), n.finished_at \
           FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[]) \
             AS n(id, org_id, agent_id, thread_id, caller, name, arguments, status, result, error, \
             created_at, finished_at) \
           RETURNING 1), \
         ended AS (\
           UPDATE tool_calls t SET status = e.status, result = e.result::json, \
             error = e.error::jsonb, finished_at = now() \
           FROM UNNEST($13::text[], $14::text[], $15::text[], $16::text[], $17::text[]) \
             AS e(org_id, id, status, result, error) \
           WHERE t.org_id = e.org_id AND t.id = e.id \
           RETURNING 1) \
         SELECT (SELECT count(*) FROM new), (SELECT count(*) FROM ended)",
    )
    .bind(&new.ids)
    .bind(&new.orgs)
    .bind(&new.agents)
    .bind(&new.threads)
    .bind(&new.callers)
    .bind(&new.names)
    .bind(&new.arguments)
    .bind(&new.statuses)
    .bind(&new.results)
    .bind(&new.errors)
    .bind(&new.created)
    .bind(&new.finished)
    .bind(&ends.orgs)
    .bind(&ends.ids)
    .bind(&ends.statuses)
    .bind(&ends.results)
    .bind(&ends.errors)
    .execute(pool)
    .await?;
    Ok(())
}

/// The call, if it belongs to this org and caller.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<ToolCallRecord, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, agent_id, name, status, result, error, created_at, finished_at FROM tool_calls \
         WHERE org_id = $1 AND caller = $2 AND id = $3",
    )
    .bind(org.as_str())
    .bind(caller)
    .bind(id)
    .fetch_one(pool)
    .await?)
}

/// The arguments the call was made with (same org and caller as [`get`]).
pub async fn arguments(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<Value, StoreError> {
    let (args,): (Json<Value>,) = sqlx::query_as(
        "SELECT arguments FROM tool_calls WHERE org_id = $1 AND caller = $2 AND id = $3",
    )
    .bind(org.as_str())
    .bind(caller)
    .bind(id)
    .fetch_one(pool)
    .await?;
    Ok(args.0)
}
