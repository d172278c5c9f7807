//! Org API keys. The secret is shown once at creation; only its SHA-256 is stored,
//! and a presented key is checked by id then compared in constant time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::{ct_eq, new_id, random_token, sha256};

/// What a key may do: configure (`studio`), mint runtime tokens (`mint`), run tool calls (`runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Studio,
    Mint,
    Runtime,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Studio => "studio",
            Scope::Mint => "mint",
            Scope::Runtime => "runtime",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        match s {
            "studio" => Some(Scope::Studio),
            "mint" => Some(Scope::Mint),
            "runtime" => Some(Scope::Runtime),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApiKey {
    /// `key_…`
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    org_id: String,
    name: String,
    scopes: Vec<String>,
    created_at: DateTime<Utc>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl Keyed for Row {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

impl From<Row> for ApiKey {
    fn from(r: Row) -> Self {
        ApiKey {
            id: r.id,
            org_id: r.org_id,
            name: r.name,
            scopes: r.scopes.iter().filter_map(|s| Scope::parse(s)).collect(),
            created_at: r.created_at,
            revoked_at: r.revoked_at,
            last_used_at: r.last_used_at,
        }
    }
}

const COLUMNS: &str = "id, org_id, name, scopes, created_at, revoked_at, last_used_at";

/// The presented form is `lgk_<key id without prefix>_<secret>`.
pub const KEY_PREFIX: &str = "lgk_";

/// Creates a key and returns it with its one-time secret.
pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    name: &str,
    scopes: &[Scope],
) -> Result<(ApiKey, String), StoreError> {
    let id = new_id("key");
    let secret = random_token(40);
    let hash = sha256(secret.as_bytes());
    let scopes: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    let row = sqlx::query_as!(
        Row,
        "INSERT INTO api_keys (id, org_id, name, secret_hash, scopes) VALUES ($1, $2, $3, $4, $5) \
         RETURNING id, org_id, name, scopes, created_at, revoked_at, last_used_at",
        &id,
        org.as_str(),
        name,
        &hash[..],
        // borrowed elements, which the macro's check (owned `String`s) does not take
        &scopes as _,
    )
    .fetch_one(pool)
    .await?;
    let token = format!("{KEY_PREFIX}{}_{secret}", &id["key_".len()..]);
    Ok((row.into(), token))
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<ApiKey>, StoreError> {
    let q = ListQuery {
        from: "api_keys",
        columns: COLUMNS,
        filters: vec![("org_id", org.as_str())],
    };
    Ok(page::list::<Row>(pool, q, req).await?.map(ApiKey::from))
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<ApiKey, StoreError> {
    let row = sqlx::query_as!(
        Row,
        "SELECT id, org_id, name, scopes, created_at, revoked_at, last_used_at \
         FROM api_keys WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.into())
}

/// Revoking is idempotent; the key stops working at once.
pub async fn revoke(pool: &PgPool, org: &OrgId, id: &str) -> Result<ApiKey, StoreError> {
    let row = sqlx::query_as!(
        Row,
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE org_id = $1 AND id = $2 \
         RETURNING id, org_id, name, scopes, created_at, revoked_at, last_used_at",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.into())
}

/// Why a presented key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not of the shape loopgate issues (checked without the database).
    Malformed,
    /// No such key id.
    Unknown,
    Revoked,
    WrongSecret,
}

const ID_CHARS: usize = 22;
const SECRET_CHARS: usize = 40;

/// The key id of a presented key when it has exactly the shape loopgate issues
/// (`lgk_` + 22 base62 + `_` + 40 base62); `None` otherwise, with no database work.
pub fn key_id_of(presented: &str) -> Option<String> {
    let rest = presented.strip_prefix(KEY_PREFIX)?;
    let (id_part, secret) = rest.split_once('_')?;
    let base62 = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_alphanumeric());
    (base62(id_part, ID_CHARS) && base62(secret, SECRET_CHARS)).then(|| format!("key_{id_part}"))
}

/// Checks a presented key: the key, or why it was refused.
pub async fn authenticate(
    pool: &PgPool,
    presented: &str,
) -> Result<Result<ApiKey, Refusal>, StoreError> {
    let Some(id) = key_id_of(presented) else {
        return Ok(Err(Refusal::Malformed));
    };
    let secret = &presented[presented.len() - SECRET_CHARS..];
    let found = sqlx::query_scalar!("SELECT secret_hash FROM api_keys WHERE id = $1", &id)
        .fetch_optional(pool)
        .await?;
    // Hash even when the id is unknown so both paths cost the same.
    let presented_hash = sha256(secret.as_bytes());
    let Some(stored) = found else {
        return Ok(Err(Refusal::Unknown));
    };
    if !ct_eq(&stored, &presented_hash) {
        return Ok(Err(Refusal::WrongSecret));
    }
    let row = sqlx::query_as!(
        Row,
        "SELECT id, org_id, name, scopes, created_at, revoked_at, last_used_at \
         FROM api_keys WHERE id = $1",
        &id,
    )
    .fetch_one(pool)
    .await?;
    if row.revoked_at.is_some() {
        return Ok(Err(Refusal::Revoked));
    }
    // at most one write a minute per key, not one per request
    sqlx::query!(
        "UPDATE api_keys SET last_used_at = now() WHERE id = $1 \
         AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        &id,
    )
    .execute(pool)
    .await?;
    Ok(Ok(row.into()))
}
