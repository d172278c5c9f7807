//! Runtime token revocation: a token lives while the API key that minted it is not
//! revoked (or deleted) and the token itself was not revoked.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Whether a runtime token may still be used: its minting key exists in the org and is
/// not revoked, and the token id is not revoked. One round trip.
pub async fn token_alive(
    pool: &PgPool,
    org: &OrgId,
    minting_key: &str,
    token_id: &str,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM api_keys WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL)
             AND NOT EXISTS (SELECT 1 FROM runtime_token_revocations
               WHERE org_id = $1 AND token_id = $3) AS "alive!""#,
        org.as_str(),
        minting_key,
        token_id,
    )
    .fetch_one(pool)
    .await?)
}

/// Revokes one token (idempotent); the row is kept until the token would have expired.
pub async fn revoke(
    pool: &PgPool,
    org: &OrgId,
    token_id: &str,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO runtime_token_revocations (org_id, token_id, expires_at) VALUES ($1, $2, $3) \
         ON CONFLICT (org_id, token_id) DO NOTHING",
        org.as_str(),
        token_id,
        expires_at,
    )
    .execute(pool)
    .await?;
    Ok(())
}
