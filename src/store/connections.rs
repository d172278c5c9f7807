//! End users' connections of connected-app toolkits (D4) and the
//! single-use links that create them. A connection's secret (OAuth tokens or an API
//! key) is AEAD ciphertext bound to (org, user, toolkit) and is never listed; a link
//! is stored only as the SHA-256 of its token, and is the credential of the connect
//! page, so it is looked up without an org (like an API key).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::Sealed;

/// A connection as the customer backend sees it (never a secret).
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct Connection {
    /// `con_…`
    pub id: String,
    pub user_id: String,
    pub toolkit: String,
    #[sqlx(rename = "created_at")]
    pub connected_at: DateTime<Utc>,
    /// When the current access token expires (OAuth); it is refreshed before then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// A refresh failed: the user must connect again.
    pub broken: bool,
    /// OAuth: `available` when the authorization server granted a refresh token, `none`
    /// when it did not (the connection stops working when its access token expires: ask
    /// for offline access, e.g. `authorization_params` `prompt=consent` or
    /// `access_type=offline`). Absent for an API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "available")]
    pub refresh: Option<String>,
}

impl Keyed for Connection {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.connected_at, &self.id)
    }
}

/// A connection with what a call needs (its `Debug` shows the secret's length only).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Secret {
    pub id: String,
    pub kind: String,
    #[sqlx(try_from = "Vec<u8>")]
    pub secret_ciphertext: Sealed,
    pub expires_at: Option<DateTime<Utc>>,
    pub broken: bool,
    /// How long the current access token was issued for (OAuth).
    pub token_lifetime_seconds: Option<i32>,
}

const COLUMNS: &str = "id, user_id, toolkit, created_at, expires_at, broken, \
     CASE WHEN kind = 'oauth2' THEN CASE WHEN refresh_token_held IS FALSE THEN 'none' ELSE 'available' END END AS refresh";

/// What a new connection holds.
pub struct NewConnection<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub toolkit: &'a str,
    pub provider_id: &'a str,
    pub kind: &'a str,
    pub secret_ciphertext: Vec<u8>,
    pub expires_at: Option<DateTime<Utc>>,
    /// OAuth: the access token's lifetime, and whether a refresh token came with it.
    pub token_lifetime_seconds: Option<i32>,
    pub refresh_token_held: Option<bool>,
}

/// Stores the user's connection of the toolkit, replacing an earlier one.
pub async fn upsert(pool: &PgPool, org: &OrgId, c: NewConnection<'_>) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO connections (id, org_id, user_id, toolkit, provider_id, kind, secret_ciphertext, expires_at, \
         token_lifetime_seconds, refresh_token_held) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (org_id, user_id, toolkit) DO UPDATE SET provider_id = EXCLUDED.provider_id, \
         kind = EXCLUDED.kind, secret_ciphertext = EXCLUDED.secret_ciphertext, \
         expires_at = EXCLUDED.expires_at, token_lifetime_seconds = EXCLUDED.token_lifetime_seconds, \
         refresh_token_held = EXCLUDED.refresh_token_held, broken = FALSE, created_at = now(), updated_at = now()",
        c.id,
        org.as_str(),
        c.user_id,
        c.toolkit,
        c.provider_id,
        c.kind,
        c.secret_ciphertext,
        c.expires_at,
        c.token_lifetime_seconds,
        c.refresh_token_held,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The user's connection of the toolkit, with its sealed secret.
pub async fn secret(
    pool: &PgPool,
    org: &OrgId,
    user_id: &str,
    toolkit: &str,
    provider_id: &str,
) -> Result<Option<Secret>, StoreError> {
    // the provider too: a tool of another provider naming the same toolkit never gets the
    // user's token (it would be sent to that provider's base_url)
    Ok(sqlx::query_as!(
        Secret,
        "SELECT id, kind, secret_ciphertext, expires_at, broken, token_lifetime_seconds FROM connections \
         WHERE org_id = $1 AND user_id = $2 AND toolkit = $3 AND provider_id = $4",
        org.as_str(),
        user_id,
        toolkit,
        provider_id,
    )
    .fetch_optional(pool)
    .await?)
}

/// Whether any user holds an OAuth connection made through `provider_id` (its refresh
/// token belongs to the provider's token endpoint).
pub async fn any_oauth(pool: &PgPool, org: &OrgId, provider_id: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM connections
             WHERE org_id = $1 AND provider_id = $2 AND kind = 'oauth2') AS "exists!""#,
        org.as_str(),
        provider_id,
    )
    .fetch_one(pool)
    .await?)
}

/// A connection's row held (`FOR UPDATE`) while its tokens are refreshed, so calls due
/// at the same moment refresh one after the other: a rotating refresh token works only
/// once, and the second caller reads the tokens the first one stored instead of
/// presenting the spent one (which would mark the connection broken). Dropped without
/// [`RefreshLock::release`], [`RefreshLock::refreshed`] or [`RefreshLock::broken`], the
/// transaction rolls back and the row is free again.
pub struct RefreshLock {
    tx: sqlx::Transaction<'static, sqlx::Postgres>,
    org: OrgId,
    id: String,
}

/// Waits for the connection's row and holds it; `None` when it is gone.
pub async fn lock_for_refresh(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
) -> Result<Option<(RefreshLock, Secret)>, StoreError> {
    let mut tx = pool.begin().await?;
    let row = sqlx::query_as!(
        Secret,
        "SELECT id, kind, secret_ciphertext, expires_at, broken, token_lifetime_seconds FROM connections \
         WHERE org_id = $1 AND id = $2 FOR UPDATE",
        org.as_str(),
        id,
    )
    .fetch_optional(&mut *tx)
    .await?;
    Ok(row.map(|secret| {
        let lock = RefreshLock {
            tx,
            org: org.clone(),
            id: id.to_string(),
        };
        (lock, secret)
    }))
}

impl RefreshLock {
    /// Nothing to write (another call refreshed it meanwhile).
    pub async fn release(self) -> Result<(), StoreError> {
        Ok(self.tx.commit().await?)
    }

    /// New tokens after a refresh.
    pub async fn refreshed(
        mut self,
        secret_ciphertext: Vec<u8>,
        expires_at: Option<DateTime<Utc>>,
        token_lifetime_seconds: Option<i32>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE connections SET secret_ciphertext = $3, expires_at = $4, token_lifetime_seconds = $5, \
             broken = FALSE, updated_at = now() WHERE org_id = $1 AND id = $2",
            self.org.as_str(),
            &self.id,
            secret_ciphertext,
            expires_at,
            token_lifetime_seconds,
        )
        .execute(&mut *self.tx)
        .await?;
        Ok(self.tx.commit().await?)
    }

    /// A refresh failed: the next call answers `connect_required`.
    pub async fn broken(mut self) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE connections SET broken = TRUE, updated_at = now() WHERE org_id = $1 AND id = $2",
            self.org.as_str(),
            &self.id,
        )
        .execute(&mut *self.tx)
        .await?;
        Ok(self.tx.commit().await?)
    }
}

/// The user's working connections' toolkits.
pub async fn connected_toolkits(
    pool: &PgPool,
    org: &OrgId,
    user_id: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT toolkit FROM connections WHERE org_id = $1 AND user_id = $2 AND NOT broken",
        org.as_str(),
        user_id,
    )
    .fetch_all(pool)
    .await?)
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    user_id: Option<&str>,
    req: &PageRequest,
) -> Result<ListPage<Connection>, StoreError> {
    let mut filters = vec![("org_id", org.as_str())];
    if let Some(u) = user_id {
        filters.push(("user_id", u));
    }
    let q = ListQuery {
        from: "connections",
        columns: COLUMNS,
        filters,
    };
    page::list::<Connection>(pool, q, req).await
}

/// A connection about to be deleted: what revoking its token needs.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Doomed {
    pub user_id: String,
    pub toolkit: String,
    pub provider_id: String,
    pub kind: String,
    #[sqlx(try_from = "Vec<u8>")]
    pub secret_ciphertext: Sealed,
}

pub async fn doomed(pool: &PgPool, org: &OrgId, id: &str) -> Result<Option<Doomed>, StoreError> {
    Ok(sqlx::query_as!(
        Doomed,
        "SELECT user_id, toolkit, provider_id, kind, secret_ciphertext FROM connections \
         WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_optional(pool)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM connections WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

/// An open connect link.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Link {
    pub org_id: String,
    pub user_id: String,
    pub toolkit: String,
    pub provider_id: String,
    pub verifier_ciphertext: Option<Vec<u8>>,
    pub token_hash: Vec<u8>,
}

pub async fn create_link(
    pool: &PgPool,
    org: &OrgId,
    token_hash: &[u8],
    user_id: &str,
    toolkit: &str,
    provider_id: &str,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO connect_links (token_hash, org_id, user_id, toolkit, provider_id, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        token_hash,
        org.as_str(),
        user_id,
        toolkit,
        provider_id,
        expires_at,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The link of this token hash, if it is unused and unexpired.
pub async fn open_link(pool: &PgPool, token_hash: &[u8]) -> Result<Option<Link>, StoreError> {
    Ok(sqlx::query_as!(
        Link,
        "SELECT org_id, user_id, toolkit, provider_id, verifier_ciphertext, token_hash \
         FROM connect_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()",
        token_hash,
    )
    .fetch_optional(pool)
    .await?)
}

/// Uses the link up (at most once: false when it was already used or has expired);
/// an OAuth flow keeps its `state` hash and sealed PKCE verifier on it.
pub async fn consume_link(
    pool: &PgPool,
    token_hash: &[u8],
    state_hash: Option<&[u8]>,
    verifier_ciphertext: Option<Vec<u8>>,
) -> Result<bool, StoreError> {
    let done = sqlx::query!(
        "UPDATE connect_links SET used_at = now(), state_hash = $2, verifier_ciphertext = $3 \
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()",
        token_hash,
        state_hash,
        verifier_ciphertext,
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The OAuth flow of this `state` hash, taken once (its state is cleared) and only
/// within the link's lifetime.
pub async fn take_state(pool: &PgPool, state_hash: &[u8]) -> Result<Option<Link>, StoreError> {
    Ok(sqlx::query_as!(
        Link,
        "UPDATE connect_links SET state_hash = NULL WHERE state_hash = $1 AND expires_at > now() \
         RETURNING org_id, user_id, toolkit, provider_id, verifier_ciphertext, token_hash",
        state_hash,
    )
    .fetch_optional(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection's sealed tokens never reach a log line: its `Debug` is the one
    /// redaction of [`Sealed`] (length only), not a copy of it.
    #[test]
    fn a_secret_debug_shows_the_sealed_length_only() {
        let secret = Secret {
            id: "con_1".into(),
            kind: "oauth".into(),
            secret_ciphertext: Sealed(b"tokens-tokens".to_vec()),
            expires_at: None,
            broken: false,
            token_lifetime_seconds: None,
        };
        let shown = format!("{secret:?}");
        assert!(
            shown.contains("secret_ciphertext: Sealed(13 bytes)"),
            "{shown}"
        );
        assert!(!shown.contains("116, 111, 107"), "{shown}");
    }
}
