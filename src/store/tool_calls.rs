//! Tool-call records, read back by the same caller (`GET /v1/tool-calls/{id}`), so a
//! disconnect loses nothing. A streamed call is written when it starts (`running`, its id
//! is in the stream's first chunks and may be followed) and updated when it ends; a call
//! whose id nobody learns before it ends is written once, finished ([`Write`]). Writes are
//! put together into one statement ([`write_all`]) by each replica's writer
//! (`call::call_records`).
//!
//! A result filled from a presented template (a cache hit: the same text for every hit
//! but for its `_resultId`) is recorded as a reference ([`Outcome::Filled`]): the text's
//! parts are stored once per org in `tool_call_bodies` ([`Body`], keyed by their digest,
//! so replicas converge on one row) and the record keeps the body's id and the id it was
//! filled with. The one reader, [`get`], rebuilds the text in SQL —
//! `array_to_string(parts, body_fill)` joins exactly as `loopgate_engine::PresentedTemplate` fills
//! (an empty part stays; no part is NULL) — so a record reads the same either way.
use std::collections::HashSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::{OrgId, StoreError};
use crate::crypto::sha256_list;

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

/// A result text stored once and referenced by many records: its parts, joined by each
/// record's fill, are that record's result.
#[derive(Debug, PartialEq)]
pub struct Body {
    /// Hex SHA-256 of the parts (as a list): the same text has the same id on every replica.
    id: String,
    parts: Arc<[String]>,
}

impl Body {
    pub fn new(parts: Arc<[String]>) -> Self {
        let id = hex::encode(sha256_list(parts.iter().map(String::as_bytes)));
        Self { id, parts }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its parts, in order.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The text it is with `fill` between its parts (as `PresentedTemplate` fills).
    pub fn text(&self, fill: &str) -> String {
        self.parts.join(fill)
    }

    /// The bytes of its parts.
    pub fn bytes(&self) -> usize {
        self.parts.iter().map(String::len).sum()
    }
}

/// A succeeded call's result as a reference to a [`Body`] and the id it is filled with.
#[derive(Debug, Clone)]
pub struct Filled {
    pub body: Arc<Body>,
    pub fill: String,
    /// Whether this write also upserts the body (refreshing its `created_at`): set by the
    /// writer, which knows which bodies it wrote lately (`call::call_records`).
    pub with_body: bool,
}

/// How a call ended: the result's JSON text (or a reference to it), or the problem
/// document's.
#[derive(Debug, Clone)]
pub enum Outcome {
    Succeeded(String),
    Filled(Filled),
    Failed(String),
}

/// An outcome's columns: status, result, body id, body fill, error.
type OutcomeColumns<'a> = (
    &'static str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

impl Outcome {
    fn columns(&self) -> OutcomeColumns<'_> {
        match self {
            Outcome::Succeeded(r) => ("succeeded", Some(r), None, None, None),
            Outcome::Filled(f) => ("succeeded", None, Some(f.body.id()), Some(&f.fill), None),
            Outcome::Failed(e) => ("failed", None, None, None, Some(e)),
        }
    }
    fn len(&self) -> usize {
        match self {
            Outcome::Succeeded(t) | Outcome::Failed(t) => t.len(),
            Outcome::Filled(f) => {
                f.fill.len() + f.body.id().len() + if f.with_body { f.body.bytes() } else { 0 }
            }
        }
    }
}

/// One write of one call's record; [`write_all`] puts many into one statement. Each
/// carries its org, and a finish matches its row by org and id.
#[derive(Debug)]
pub enum Write {
    /// A streamed call starts: its `running` row, `created_at` when it started (K1: a
    /// write kept while Postgres was out of reach keeps its own time).
    Start {
        org: OrgId,
        call: NewCall,
        at: DateTime<Utc>,
    },
    /// A streamed call ends, `finished_at` when it ended.
    Finish {
        org: OrgId,
        id: String,
        outcome: Outcome,
        at: DateTime<Utc>,
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
    /// The reference its outcome makes, with the org it is in.
    pub fn filled(&self) -> Option<(&OrgId, &Filled)> {
        match self {
            Write::Finish {
                org,
                outcome: Outcome::Filled(f),
                ..
            }
            | Write::Once {
                org,
                outcome: Outcome::Filled(f),
                ..
            } => Some((org, f)),
            _ => None,
        }
    }

    pub fn filled_mut(&mut self) -> Option<(&OrgId, &mut Filled)> {
        match self {
            Write::Finish {
                org,
                outcome: Outcome::Filled(f),
                ..
            }
            | Write::Once {
                org,
                outcome: Outcome::Filled(f),
                ..
            } => Some((org, f)),
            _ => None,
        }
    }

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
    body_ids: Vec<Option<&'a str>>,
    fills: Vec<Option<&'a str>>,
    errors: Vec<Option<&'a str>>,
    created: Vec<Option<DateTime<Utc>>>,
    finished: Vec<Option<DateTime<Utc>>>,
}

impl<'a> Columns<'a> {
    fn row(
        &mut self,
        org: &'a OrgId,
        c: &'a NewCall,
        end: Option<(&'a Outcome, DateTime<Utc>)>,
        created: DateTime<Utc>,
    ) {
        let (status, result, body_id, fill, error) =
            end.map_or(("running", None, None, None, None), |e| e.0.columns());
        self.ids.push(&c.id);
        self.orgs.push(org.as_str());
        self.agents.push(&c.agent_id);
        self.threads.push(&c.thread_id);
        self.callers.push(&c.caller);
        self.names.push(&c.name);
        self.arguments.push(&c.arguments);
        self.statuses.push(status);
        self.results.push(result);
        self.body_ids.push(body_id);
        self.fills.push(fill);
        self.errors.push(error);
        self.created.push(Some(created));
        self.finished.push(end.map(|e| e.1));
    }
}

/// The bodies a batch upserts, once each, their parts flattened (`owners[k]`: the index,
/// from 1, of the body `parts[k]` belongs to; parts in order).
#[derive(Default)]
struct Bodies<'a> {
    orgs: Vec<&'a str>,
    ids: Vec<&'a str>,
    parts: Vec<&'a str>,
    owners: Vec<i32>,
}

impl<'a> Bodies<'a> {
    fn of(writes: &'a [Write]) -> Self {
        let mut b = Bodies::default();
        let mut seen = HashSet::new();
        for (org, f) in writes.iter().filter_map(Write::filled) {
            if !f.with_body {
                continue;
            }
            // one row may be upserted once per statement
            if !seen.insert((org.as_str(), f.body.id())) {
                continue;
            }
            b.orgs.push(org.as_str());
            b.ids.push(f.body.id());
            let owner = b.ids.len() as i32;
            for part in f.body.parts.iter() {
                b.parts.push(part);
                b.owners.push(owner);
            }
        }
        b
    }
}

/// Every write in one statement (one round trip, one transaction): the bodies its
/// references carry upserted (their `created_at` refreshed; in key order, so two replicas'
/// batches upserting the same bodies lock them in the same order and never deadlock), the
/// new rows inserted and the running calls' ends updated, matched by org and id. All or
/// nothing.
///
/// Idempotent (K1: a journal replayed after its replica died may hold writes Postgres
/// already took): a row that exists is not inserted again — a `running` row replayed after
/// its end never flips the call back to running — and an end written again writes the
/// same outcome.
///
/// `replica`: this replica's id, kept on the `running` rows it inserts, so they are closed
/// as interrupted if it dies before ending them ([`close_interrupted`]).
pub async fn write_all(pool: &PgPool, replica: &str, writes: &[Write]) -> Result<(), StoreError> {
    let mut new = Columns::default();
    let mut ends = Columns::default();
    for w in writes {
        match w {
            Write::Start { org, call, at } => new.row(org, call, None, *at),
            Write::Once {
                org,
                call,
                outcome,
                started_at,
                finished_at,
            } => new.row(org, call, Some((outcome, *finished_at)), *started_at),
            Write::Finish {
                org,
                id,
                outcome,
                at,
            } => {
                let (status, result, body_id, fill, error) = outcome.columns();
                ends.orgs.push(org.as_str());
                ends.ids.push(id);
                ends.statuses.push(status);
                ends.results.push(result);
                ends.body_ids.push(body_id);
                ends.fills.push(fill);
                ends.errors.push(error);
                ends.finished.push(Some(*at));
            }
        }
    }
    let bodies = Bodies::of(writes);
    // every parameter is an array of borrowed and often optional elements, which the
    // macro's check (owned `Vec<String>` and the like) does not take: each is cast in the SQL
    sqlx::query!(
        "WITH bodies AS (\
           INSERT INTO tool_call_bodies (org_id, id, parts) \
           SELECT b.org_id, b.id, array_agg(p.part ORDER BY p.n) \
           FROM UNNEST($18::text[], $19::text[]) WITH ORDINALITY AS b(org_id, id, i) \
           JOIN UNNEST($20::text[], $21::int4[]) WITH ORDINALITY AS p(part, owner, n) ON p.owner = b.i \
           GROUP BY b.i, b.org_id, b.id ORDER BY b.org_id, b.id \
           ON CONFLICT (org_id, id) DO UPDATE SET created_at = now() \
           RETURNING 1), \
         new AS (\
           INSERT INTO tool_calls (id, org_id, agent_id, thread_id, caller, name, arguments, status, \
             result, body_id, body_fill, error, created_at, finished_at, replica_id) \
           SELECT n.id, n.org_id, n.agent_id, n.thread_id, n.caller, n.name, n.arguments::jsonb, \
             n.status, n.result::json, n.body_id, n.body_fill, n.error::jsonb, \
             COALESCE(n.created_at, now()), n.finished_at, \
             CASE WHEN n.status = 'running' THEN $26::text END \
           FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::text[], $8::text[], $9::text[], $22::text[], $23::text[], $10::text[], \
             $11::timestamptz[], $12::timestamptz[]) \
             AS n(id, org_id, agent_id, thread_id, caller, name, arguments, status, result, body_id, \
             body_fill, error, created_at, finished_at) \
           ON CONFLICT (id) DO NOTHING \
           RETURNING 1), \
         ended AS (\
           UPDATE tool_calls t SET status = e.status, result = e.result::json, \
             body_id = e.body_id, body_fill = e.body_fill, error = e.error::jsonb, \
             finished_at = COALESCE(e.finished_at, now()) \
           FROM UNNEST($13::text[], $14::text[], $15::text[], $16::text[], $24::text[], \
             $25::text[], $17::text[], $27::timestamptz[]) \
             AS e(org_id, id, status, result, body_id, body_fill, error, finished_at) \
           WHERE t.org_id = e.org_id AND t.id = e.id \
           RETURNING 1) \
         SELECT (SELECT count(*) FROM bodies) AS bodies, (SELECT count(*) FROM new) AS new, \
           (SELECT count(*) FROM ended) AS ended",
        &new.ids as _,
        &new.orgs as _,
        &new.agents as _,
        &new.threads as _,
        &new.callers as _,
        &new.names as _,
        &new.arguments as _,
        &new.statuses as _,
        &new.results as _,
        &new.errors as _,
        &new.created as _,
        &new.finished as _,
        &ends.orgs as _,
        &ends.ids as _,
        &ends.statuses as _,
        &ends.results as _,
        &ends.errors as _,
        &bodies.orgs as _,
        &bodies.ids as _,
        &bodies.parts as _,
        &bodies.owners[..],
        &new.body_ids as _,
        &new.fills as _,
        &ends.body_ids as _,
        &ends.fills as _,
        replica,
        &ends.finished as _,
    )
    .fetch_one(pool)
    .await?;
    Ok(())
}

/// K1: this replica is alive (its heartbeat, every few seconds).
pub async fn heartbeat(pool: &PgPool, replica: &str) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO replica_leases (replica_id) VALUES ($1) \
         ON CONFLICT (replica_id) DO UPDATE SET seen_at = now()",
        replica,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// K1: this replica stops (after its records were flushed): its calls still `running`
/// are closed by the next [`close_interrupted`] of any replica.
pub async fn leave(pool: &PgPool, replica: &str) -> Result<(), StoreError> {
    sqlx::query!("DELETE FROM replica_leases WHERE replica_id = $1", replica)
        .execute(pool)
        .await?;
    Ok(())
}

/// K1: closes as failed, with `error` (a problem document's JSON text), every call left
/// `running` by a replica whose heartbeat is older than `lease` (or gone); forgets
/// heartbeats older than an hour. How many calls it closed. Like retention, one rule for
/// every tenant: the one statement here not scoped to an org.
pub async fn close_interrupted(
    pool: &PgPool,
    lease: std::time::Duration,
    error: &str,
) -> Result<u64, StoreError> {
    let secs = lease.as_secs_f64();
    let closed = sqlx::query!(
        "UPDATE tool_calls c SET status = 'failed', error = $2::text::jsonb, finished_at = now() \
         WHERE c.status = 'running' AND c.replica_id IS NOT NULL \
           AND NOT EXISTS (SELECT 1 FROM replica_leases r WHERE r.replica_id = c.replica_id \
             AND r.seen_at > now() - make_interval(secs => $1))",
        secs,
        error,
    )
    .execute(pool)
    .await?
    .rows_affected();
    sqlx::query!("DELETE FROM replica_leases WHERE seen_at < now() - interval '1 hour'")
        .execute(pool)
        .await?;
    Ok(closed)
}

/// The call, if it belongs to this org and caller.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<ToolCallRecord, StoreError> {
    Ok(sqlx::query_as!(
        ToolCallRecord,
        r#"SELECT c.id, c.agent_id, c.name, c.status,
             COALESCE(c.result, array_to_string(b.parts, c.body_fill)::json)
               AS "result: Json<Value>",
             c.error AS "error: Json<Value>", c.created_at, c.finished_at FROM tool_calls c
           LEFT JOIN tool_call_bodies b ON b.org_id = c.org_id AND b.id = c.body_id
           WHERE c.org_id = $1 AND c.caller = $2 AND c.id = $3"#,
        org.as_str(),
        caller,
        id,
    )
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
    Ok(sqlx::query_scalar!(
        "SELECT arguments FROM tool_calls WHERE org_id = $1 AND caller = $2 AND id = $3",
        org.as_str(),
        caller,
        id,
    )
    .fetch_one(pool)
    .await?)
}
