//! K2: the durable copy of stored results made while Redis is out of reach. A replica
//! that cannot write a result to Redis writes it here as well (its text, its provenance,
//! its tombstone: `results::stored_results`), so the `_resultId` it hands out is readable
//! from every replica, during the outage and after it. Keys are the result store's own
//! (they start with the org and thread); rows are read by org and key, unexpired only,
//! and pruned once expired (`store::retention`).

use std::time::Duration;

use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Writes `items` (key, value, TTL) for `org` in one statement, replacing older copies.
pub async fn put(
    pool: &PgPool,
    org: &OrgId,
    items: &[(&str, &str, Duration)],
) -> Result<(), StoreError> {
    let keys: Vec<&str> = items.iter().map(|i| i.0).collect();
    let values: Vec<&str> = items.iter().map(|i| i.1).collect();
    let ttls: Vec<f64> = items.iter().map(|i| i.2.as_secs_f64()).collect();
    sqlx::query!(
        "INSERT INTO result_copies (org_id, key, value, expires_at) \
         SELECT $1, k, v, now() + make_interval(secs => t) \
         FROM UNNEST($2::text[], $3::text[], $4::float8[]) AS i(k, v, t) \
         ON CONFLICT (org_id, key) DO UPDATE SET value = EXCLUDED.value, \
           expires_at = EXCLUDED.expires_at",
        org.as_str(),
        &keys as _,
        &values as _,
        &ttls[..],
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The unexpired copy of `key` in `org`.
pub async fn get(pool: &PgPool, org: &OrgId, key: &str) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT value FROM result_copies WHERE org_id = $1 AND key = $2 AND expires_at > now()",
        org.as_str(),
        key,
    )
    .fetch_optional(pool)
    .await?)
}
