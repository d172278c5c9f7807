//! Providers: upstream APIs with their base URL, how the credential is placed, the
//! org-level credential (AEAD ciphertext, never selected except for a call) and rate limit.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::tools::ToolKind;
use super::{ListPage, OrgId, PageRequest, StoreError};

/// Where the credential goes on an upstream request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, sqlx::Type)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "TEXT", rename_all = "lowercase")]
pub enum AuthType {
    /// `Authorization: Bearer <credential>`
    Bearer,
    /// a header named `name`
    Header,
    /// a query parameter named `name`
    Query,
    None,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProviderAuth {
    #[serde(rename = "type")]
    pub kind: AuthType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The origin of a URL (scheme, host, port), or `None` when it has none (not an
/// absolute http(s)-like URL).
pub fn origin(url: &str) -> Option<String> {
    let o = url::Url::parse(url).ok()?.origin();
    o.is_tuple().then(|| o.ascii_serialization())
}

/// Where a credential entered for a provider goes: the base URL's origin and the auth
/// placement (type and name). A credential (the org's, or a user's carried in a runtime
/// token) is sent only while this is what it was when the secret was entered; paths
/// may change, anything else needs the secret again. The one owner of that rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CredentialBinding(String);

impl CredentialBinding {
    /// `None` when `base_url` has no origin (then nothing is bound, and nothing matches).
    pub fn of(base_url: &str, auth: &ProviderAuth) -> Option<Self> {
        let kind = match auth.kind {
            AuthType::Bearer => "bearer",
            AuthType::Header => "header",
            AuthType::Query => "query",
            AuthType::None => "none",
        };
        let name = auth.name.as_deref().unwrap_or("");
        Some(Self(format!("{} {kind} {name}", origin(base_url)?)))
    }

    /// Whether a secret entered for `self` may go where `now` sends it.
    pub fn allows(entered: Option<&Self>, now: Option<&Self>) -> bool {
        entered.is_some() && entered == now
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RateLimit {
    pub requests_per_second: f64,
    pub burst: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Provider {
    /// `prv_…`
    pub id: String,
    pub org_id: String,
    pub name: String,
    /// `api` (an HTTP API), `mcp` (an MCP server) or `app` (a connected-app toolkit);
    /// the kind its tools get.
    pub kind: ToolKind,
    /// The API's base URL; for an MCP server, its streamable HTTP endpoint (= `url`).
    pub base_url: String,
    /// The MCP endpoint, for kind `mcp` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub auth: ProviderAuth,
    /// Whether an org-level credential is stored (it is never returned).
    pub has_credential: bool,
    pub user_credentials_required: bool,
    pub rate_limit: Option<RateLimit>,
    /// P9: requests one walk keeps in flight at once against this provider (1 to 32;
    /// absent: the default, 4). The rate limit still spaces them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 32)]
    pub concurrency: Option<u32>,
    /// Whether upstream requests carry the call's W3C trace context (`traceparent`,
    /// `tracestate`), so the API's own traces join the call's (default false).
    pub propagate_trace_context: bool,
    /// Kind `app`: the toolkit its tools belong to (D2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<String>,
    /// Kind `app`: how end users connect the toolkit (the client secret is never returned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<Connection>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Provider {
    pub fn credential_binding(&self) -> Option<CredentialBinding> {
        CredentialBinding::of(&self.base_url, &self.auth)
    }
}

/// How an end user connects a connected-app toolkit (D4).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Connection {
    /// OAuth 2.0 authorization code with PKCE. With `issuer`, the endpoints not given are
    /// discovered from the server's metadata (RFC 8414 / OpenID discovery).
    Oauth2 {
        /// The authorization server's issuer identifier: its metadata is discovered, and
        /// an `iss` on the callback (RFC 9207) must equal it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        issuer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authorize_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token_url: Option<String>,
        /// Where a connection's token is revoked when it is deleted (RFC 7009).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revocation_url: Option<String>,
        client_id: String,
        #[serde(default)]
        scopes: Vec<String>,
        /// How the client authenticates at the token endpoint; absent: chosen from the
        /// server's metadata (`client_secret_basic` when listed, else `client_secret_post`),
        /// `none` when no client secret is stored.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token_endpoint_auth_method: Option<TokenAuthMethod>,
        /// Extra parameters of the authorization request (`prompt`, `access_type`,
        /// `audience`, `resource`, …).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        authorization_params: BTreeMap<String, String>,
        /// Whether a client secret is stored (it is never returned).
        #[serde(default)]
        has_client_secret: bool,
    },
    /// The user pastes an API key into a form.
    ApiKey {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
    },
}

/// How an OAuth client authenticates at the token endpoint (RFC 8414
/// `token_endpoint_auth_methods_supported`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuthMethod {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` in the body, no secret (PKCE is always sent).
    None,
}

impl Connection {
    /// The origin OAuth tokens are sent to: the token endpoint's, else the issuer's.
    pub fn token_origin(&self) -> Option<String> {
        match self {
            Connection::Oauth2 {
                token_url, issuer, ..
            } => token_url.as_deref().or(issuer.as_deref()).and_then(origin),
            Connection::ApiKey { .. } => None,
        }
    }
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    org_id: String,
    name: String,
    kind: ToolKind,
    base_url: String,
    auth_type: AuthType,
    auth_name: Option<String>,
    has_credential: bool,
    user_credentials_required: bool,
    rate_limit_rps: Option<f64>,
    rate_limit_burst: Option<i32>,
    concurrency: Option<i32>,
    propagate_trace_context: bool,
    toolkit: Option<String>,
    connection: Option<Json<Connection>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl Keyed for Row {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

impl From<Row> for Provider {
    fn from(r: Row) -> Self {
        Provider {
            id: r.id,
            org_id: r.org_id,
            name: r.name,
            url: (r.kind == ToolKind::Mcp).then(|| r.base_url.clone()),
            kind: r.kind,
            base_url: r.base_url,
            auth: ProviderAuth {
                kind: r.auth_type,
                name: r.auth_name,
            },
            has_credential: r.has_credential,
            user_credentials_required: r.user_credentials_required,
            rate_limit: match (r.rate_limit_rps, r.rate_limit_burst) {
                (Some(rps), Some(burst)) => Some(RateLimit {
                    requests_per_second: rps,
                    burst: burst.max(1) as u32,
                }),
                _ => None,
            },
            concurrency: r.concurrency.and_then(|c| u32::try_from(c).ok()),
            propagate_trace_context: r.propagate_trace_context,
            toolkit: r.toolkit,
            connection: r.connection.map(|c| c.0),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// The columns of [`Row`], for the list. The static queries spell them out, with the
/// types Postgres cannot tell (`kind`, `auth_type`: TEXT holding an enum; `connection`:
/// JSONB holding a [`Connection`]) and that `has_credential` is never NULL; a TEXT
/// parameter taking such an enum is passed `as _` (the macro's check knows only `&str`).
const COLUMNS: &str = "id, org_id, name, kind, base_url, auth_type, auth_name, \
     credential_ciphertext IS NOT NULL AS has_credential, user_credentials_required, \
     rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit, connection, \
     created_at, updated_at";

/// A provider's full, validated configuration as written.
pub struct ProviderFields {
    pub name: String,
    /// Written on create only: a provider's kind never changes.
    pub kind: ToolKind,
    pub base_url: String,
    pub auth: ProviderAuth,
    pub user_credentials_required: bool,
    pub rate_limit: Option<RateLimit>,
    /// P9: requests one walk keeps in flight (None: the default).
    pub concurrency: Option<u32>,
    pub propagate_trace_context: bool,
}

/// How the stored credential changes on an update.
pub enum CredentialChange {
    Keep,
    Clear,
    /// Ciphertext bound to the provider id.
    Set(Vec<u8>),
}

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    f: &ProviderFields,
    credential_ciphertext: Option<Vec<u8>>,
) -> Result<Provider, StoreError> {
    let row = sqlx::query_as!(
        Row,
        r#"INSERT INTO providers (id, org_id, name, base_url, auth_type, auth_name,
             credential_ciphertext, user_credentials_required, rate_limit_rps, rate_limit_burst,
             kind, concurrency, propagate_trace_context)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
           RETURNING id, org_id, name, kind AS "kind: ToolKind", base_url,
             auth_type AS "auth_type: AuthType", auth_name,
             credential_ciphertext IS NOT NULL AS "has_credential!", user_credentials_required,
             rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit,
             connection AS "connection: Json<Connection>", created_at, updated_at"#,
        id,
        org.as_str(),
        &f.name,
        &f.base_url,
        f.auth.kind as _,
        f.auth.name.as_deref(),
        credential_ciphertext,
        f.user_credentials_required,
        f.rate_limit.as_ref().map(|r| r.requests_per_second),
        f.rate_limit.as_ref().map(|r| r.burst as i32),
        f.kind as _,
        f.concurrency.map(|c| c as i32),
        f.propagate_trace_context,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.into())
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Provider, StoreError> {
    let row = sqlx::query_as!(
        Row,
        r#"SELECT id, org_id, name, kind AS "kind: ToolKind", base_url,
             auth_type AS "auth_type: AuthType", auth_name,
             credential_ciphertext IS NOT NULL AS "has_credential!", user_credentials_required,
             rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit,
             connection AS "connection: Json<Connection>", created_at, updated_at
           FROM providers WHERE org_id = $1 AND id = $2"#,
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.into())
}

/// The org's providers among `ids` (in no particular order).
pub async fn get_many(
    pool: &PgPool,
    org: &OrgId,
    ids: &[String],
) -> Result<Vec<Provider>, StoreError> {
    let rows = sqlx::query_as!(
        Row,
        r#"SELECT id, org_id, name, kind AS "kind: ToolKind", base_url,
             auth_type AS "auth_type: AuthType", auth_name,
             credential_ciphertext IS NOT NULL AS "has_credential!", user_credentials_required,
             rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit,
             connection AS "connection: Json<Connection>", created_at, updated_at
           FROM providers WHERE org_id = $1 AND id = ANY($2)"#,
        org.as_str(),
        ids,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(Provider::from).collect())
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<Provider>, StoreError> {
    let q = ListQuery {
        from: "providers",
        columns: COLUMNS,
        filters: vec![("org_id", org.as_str())],
    };
    Ok(page::list::<Row>(pool, q, req).await?.map(Provider::from))
}

pub async fn update(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    f: &ProviderFields,
    credential: CredentialChange,
) -> Result<Provider, StoreError> {
    let (keep, new) = match credential {
        CredentialChange::Keep => (true, None),
        CredentialChange::Clear => (false, None),
        CredentialChange::Set(c) => (false, Some(c)),
    };
    let row = sqlx::query_as!(
        Row,
        r#"UPDATE providers SET name = $3, base_url = $4, auth_type = $5, auth_name = $6,
             credential_ciphertext = CASE WHEN $7 THEN credential_ciphertext ELSE $8 END,
             user_credentials_required = $9, rate_limit_rps = $10, rate_limit_burst = $11,
             concurrency = $12, propagate_trace_context = $13, updated_at = now()
           WHERE org_id = $1 AND id = $2
           RETURNING id, org_id, name, kind AS "kind: ToolKind", base_url,
             auth_type AS "auth_type: AuthType", auth_name,
             credential_ciphertext IS NOT NULL AS "has_credential!", user_credentials_required,
             rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit,
             connection AS "connection: Json<Connection>", created_at, updated_at"#,
        org.as_str(),
        id,
        &f.name,
        &f.base_url,
        f.auth.kind as _,
        f.auth.name.as_deref(),
        keep,
        new,
        f.user_credentials_required,
        f.rate_limit.as_ref().map(|r| r.requests_per_second),
        f.rate_limit.as_ref().map(|r| r.burst as i32),
        f.concurrency.map(|c| c as i32),
        f.propagate_trace_context,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.into())
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM providers WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

/// The org-level credential's ciphertext, for the upstream caller only.
pub async fn credential_ciphertext(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT credential_ciphertext FROM providers WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// The credential bindings of the given providers that exist in the org, by id (a
/// runtime token seals each user credential with where it may go).
pub async fn credential_bindings(
    pool: &PgPool,
    org: &OrgId,
    ids: &[String],
) -> Result<HashMap<String, Option<CredentialBinding>>, StoreError> {
    let rows = sqlx::query!(
        r#"SELECT id, base_url, auth_type AS "auth_type: AuthType", auth_name FROM providers
           WHERE org_id = $1 AND id = ANY($2)"#,
        org.as_str(),
        ids,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let auth = ProviderAuth {
                kind: r.auth_type,
                name: r.auth_name,
            };
            (r.id, CredentialBinding::of(&r.base_url, &auth))
        })
        .collect())
}

/// Sets a connected-app provider's toolkit and connection; `secret` (the OAuth client
/// secret's ciphertext, bound to the provider id) replaces the stored one when given.
pub async fn set_app(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    toolkit: &str,
    connection: &Connection,
    secret: Option<Vec<u8>>,
) -> Result<Provider, StoreError> {
    let row = sqlx::query_as!(
        Row,
        r#"UPDATE providers SET toolkit = $3, connection = $4,
             connection_secret_ciphertext = COALESCE($5, connection_secret_ciphertext),
             updated_at = now() WHERE org_id = $1 AND id = $2
           RETURNING id, org_id, name, kind AS "kind: ToolKind", base_url,
             auth_type AS "auth_type: AuthType", auth_name,
             credential_ciphertext IS NOT NULL AS "has_credential!", user_credentials_required,
             rate_limit_rps, rate_limit_burst, concurrency, propagate_trace_context, toolkit,
             connection AS "connection: Json<Connection>", created_at, updated_at"#,
        org.as_str(),
        id,
        toolkit,
        // JSONB from a `Connection`, not the `serde_json::Value` the macro's check knows
        Json(connection) as _,
        secret,
    )
    .fetch_one(pool)
    .await
    .map_err(|e| match StoreError::from(e) {
        StoreError::Conflict(_) => StoreError::Conflict(format!(
            "another provider of this org already is toolkit '{toolkit}'"
        )),
        other => other,
    })?;
    Ok(row.into())
}

/// The OAuth client secret's ciphertext of a connected-app provider, for the connect flow only.
pub async fn connection_secret(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT connection_secret_ciphertext FROM providers WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}
