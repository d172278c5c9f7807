//! Webhook endpoints and deliveries (W7). An endpoint's signing secret is stored sealed
//! (the caller seals and opens it); after a rotation the previous one is kept until
//! `previous_until`. A delivery is one event of one run to one endpoint, with the exact
//! body every attempt sends. A replica claims due deliveries by setting `sending_until`
//! under `FOR UPDATE SKIP LOCKED`, so no two replicas send the same attempt; a claim
//! whose replica died runs out and the delivery is tried again.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Endpoint {
    /// `whe_…`
    pub id: String,
    pub org_id: String,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    /// Sealed to the endpoint id.
    pub secret: Vec<u8>,
    pub previous_secret: Option<Vec<u8>>,
    pub previous_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Endpoint {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

const ENDPOINT_COLUMNS: &str = "id, org_id, url, events, description, secret, previous_secret, \
                                previous_until, created_at, updated_at";

pub async fn create_endpoint(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    url: &str,
    events: &[String],
    description: Option<&str>,
    sealed_secret: &[u8],
) -> Result<Endpoint, StoreError> {
    Ok(sqlx::query_as!(
        Endpoint,
        "INSERT INTO webhook_endpoints (id, org_id, url, events, description, secret) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         RETURNING id, org_id, url, events, description, secret, previous_secret, previous_until, \
         created_at, updated_at",
        id,
        org.as_str(),
        url,
        events,
        description,
        sealed_secret,
    )
    .fetch_one(pool)
    .await?)
}

/// How many webhook endpoints the org holds.
pub async fn count_endpoints(pool: &PgPool, org: &OrgId) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM webhook_endpoints WHERE org_id = $1"#,
        org.as_str()
    )
    .fetch_one(pool)
    .await?)
}

pub async fn get_endpoint(pool: &PgPool, org: &OrgId, id: &str) -> Result<Endpoint, StoreError> {
    Ok(sqlx::query_as!(
        Endpoint,
        "SELECT id, org_id, url, events, description, secret, previous_secret, previous_until, \
         created_at, updated_at FROM webhook_endpoints WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn list_endpoints(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<Endpoint>, StoreError> {
    let q = ListQuery {
        from: "webhook_endpoints",
        columns: ENDPOINT_COLUMNS,
        filters: vec![("org_id", org.as_str())],
    };
    page::list(pool, q, req).await
}

pub async fn update_endpoint(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    url: Option<&str>,
    events: Option<&[String]>,
    description: Option<&str>,
) -> Result<Endpoint, StoreError> {
    Ok(sqlx::query_as!(
        Endpoint,
        "UPDATE webhook_endpoints SET url = COALESCE($3, url), events = COALESCE($4, events), \
         description = COALESCE($5, description), updated_at = now() WHERE org_id = $1 AND id = $2 \
         RETURNING id, org_id, url, events, description, secret, previous_secret, previous_until, \
         created_at, updated_at",
        org.as_str(),
        id,
        url,
        events,
        description,
    )
    .fetch_one(pool)
    .await?)
}

/// Makes `sealed_secret` the signing secret; the current one keeps signing for
/// `overlap_seconds`.
pub async fn rotate_secret(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    sealed_secret: &[u8],
    overlap_seconds: f64,
) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "UPDATE webhook_endpoints SET previous_secret = secret, secret = $3, \
         previous_until = now() + $4 * interval '1 second', updated_at = now() \
         WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
        sealed_secret,
        overlap_seconds,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

pub async fn delete_endpoint(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM webhook_endpoints WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

/// Queues `payload` for every endpoint of the org that subscribes to `event_type`;
/// `payload_for(delivery id)` is the body (it names its own id). Once per run and event:
/// queuing again adds nothing. The number queued.
pub async fn enqueue(
    conn: &mut sqlx::PgConnection,
    org: &OrgId,
    run_id: &str,
    event_type: &str,
    payload: &str,
) -> Result<u64, StoreError> {
    let done = sqlx::query!(
        "INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_type, run_id, payload, next_attempt_at) \
         SELECT 'msg_' || md5(e.id || ':' || $2 || ':' || $3), e.org_id, e.id, $3, $2, $4, now() \
         FROM webhook_endpoints e WHERE e.org_id = $1 AND $3 = ANY(e.events) \
         ON CONFLICT (endpoint_id, run_id, event_type) DO NOTHING",
        org.as_str(),
        run_id,
        event_type,
        payload,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// A claimed delivery with what sending it needs.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: String,
    pub org_id: String,
    pub endpoint_id: String,
    pub url: String,
    pub secret: Vec<u8>,
    pub previous_secret: Option<Vec<u8>>,
    pub payload: String,
    /// This attempt's number (1 for the first).
    pub attempt: i32,
    pub created_at: DateTime<Utc>,
}

/// Claims up to `limit` due deliveries for `lease_seconds`, at most `per_endpoint` in
/// flight per endpoint (counting those other replicas are sending), oldest due first.
pub async fn claim_due(
    pool: &PgPool,
    limit: i64,
    per_endpoint: i64,
    lease_seconds: f64,
) -> Result<Vec<Claimed>, StoreError> {
    let rows = sqlx::query!(
        r#"WITH busy AS (
             SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
             WHERE status = 'pending' AND sending_until > now() GROUP BY endpoint_id
           ), ranked AS (
             SELECT d.id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id)
                    + COALESCE(b.n, 0) AS rank
             FROM webhook_deliveries d LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= now()
               AND (d.sending_until IS NULL OR d.sending_until <= now())
           ), picked AS (
             SELECT d.id FROM webhook_deliveries d
             WHERE d.id IN (SELECT id FROM ranked WHERE rank <= $2)
               AND d.status = 'pending' AND d.next_attempt_at <= now()
               AND (d.sending_until IS NULL OR d.sending_until <= now())
             ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
           )
           UPDATE webhook_deliveries d SET sending_until = now() + $3 * interval '1 second',
                  attempts = d.attempts + 1
           FROM picked p, webhook_endpoints e
           WHERE d.id = p.id AND e.org_id = d.org_id AND e.id = d.endpoint_id
           RETURNING d.id, d.org_id, d.endpoint_id, e.url, e.secret,
                     CASE WHEN e.previous_until > now() THEN e.previous_secret END AS previous_secret,
                     d.payload, d.attempts, d.created_at"#,
        limit,
        per_endpoint,
        lease_seconds,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Claimed {
            id: r.id,
            org_id: r.org_id,
            endpoint_id: r.endpoint_id,
            url: r.url,
            secret: r.secret,
            previous_secret: r.previous_secret,
            payload: r.payload,
            attempt: r.attempts,
            created_at: r.created_at,
        })
        .collect())
}

/// How one attempt went.
pub struct Attempt<'a> {
    pub status_code: Option<i32>,
    pub error: Option<&'a str>,
    pub duration_ms: i32,
    /// `succeeded`, `pending` (retried at `next_attempt_at`) or `failed`.
    pub outcome: &'a str,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// Records an attempt of a claimed delivery and its new state, releasing the claim.
pub async fn record_attempt(
    pool: &PgPool,
    id: &str,
    attempt: i32,
    a: &Attempt<'_>,
) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        id,
        attempt,
        a.status_code,
        a.error,
        a.duration_ms,
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "UPDATE webhook_deliveries SET status = $2, last_status_code = $3, last_error = $4, \
         next_attempt_at = $5, sending_until = NULL WHERE id = $1",
        id,
        a.outcome,
        a.status_code,
        a.error,
        a.next_attempt_at,
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A delivery as listed.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Delivery {
    /// `msg_…`: also the `webhook-id` header every attempt carries.
    pub id: String,
    /// `workflow_run.succeeded`, `workflow_run.partial` or `workflow_run.failed`.
    pub event_type: String,
    pub run_id: String,
    /// `pending` (being retried), `succeeded` or `failed` (retries given up).
    pub status: String,
    /// Attempts made so far.
    pub attempts: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_status_code: Option<i32>,
    /// What went wrong on the last attempt without an HTTP answer (timeout, refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl Keyed for Delivery {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

/// An endpoint's deliveries, newest first.
pub async fn list_deliveries(
    pool: &PgPool,
    org: &OrgId,
    endpoint_id: &str,
    req: &PageRequest,
) -> Result<ListPage<Delivery>, StoreError> {
    let q = ListQuery {
        from: "webhook_deliveries",
        columns: "id, event_type, run_id, status, attempts, last_status_code, last_error, \
                  next_attempt_at, created_at",
        filters: vec![("org_id", org.as_str()), ("endpoint_id", endpoint_id)],
    };
    page::list(pool, q, req).await
}
