//! Configuration: one validated `Settings`, read from defaults, then an optional TOML
//! file (`LOOPGATE_CONFIG`, else `loopgate.toml` when present), then `LOOPGATE_*`
//! environment variables (`DATABASE_URL` and `REDIS_URL` are also read unprefixed).
//! Secrets are `SecretString`s: they never reach a log line or a `Debug` print.

use anyhow::{bail, Context};
use base64::Engine as _;
use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use crate::auth::proxies::TrustedProxies;

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    /// Address the HTTP server binds, e.g. `127.0.0.1:8080` (port 0 picks a free one).
    pub bind: String,
    /// Postgres connection string (required).
    pub database_url: Option<SecretString>,
    /// Redis connection string; without it an in-process store is used.
    pub redis_url: Option<SecretString>,
    /// How long one Redis round trip (and connecting) may take before this replica treats
    /// Redis as unreachable for it and uses its in-process store (`kv`).
    pub redis_timeout_ms: u64,
    /// G3: how long a stored result (`_resultId`) can be read; a call's event log, a
    /// continuation and a replaced cache entry a result points at live as long.
    pub result_ttl_seconds: u64,
    /// Bearer token of platform admins.
    pub admin_token: Option<SecretString>,
    /// 32 bytes, base64: encrypts provider credentials at rest (AES-256-GCM).
    pub credential_key: Option<SecretString>,
    /// At least 32 bytes: signs runtime tokens (HS256).
    pub token_signing_key: Option<SecretString>,
    /// Issuer and audience written into and required of runtime tokens.
    pub token_issuer: String,
    pub token_audience: String,
    /// Maximum Postgres connections of this replica.
    pub database_max_connections: u32,
    /// HTTP worker threads of this replica; 0 is one per CPU the process may use.
    pub http_workers: u32,
    /// Upstream calls: allow loopback/private/link-local targets (tests, on-prem).
    pub allow_private_upstreams: bool,
    /// Requests per second allowed per org on loopgate's own API.
    pub org_requests_per_second: u32,
    /// Walks that may run at once per org.
    pub org_concurrent_walks: u32,
    /// Replicas sharing this Postgres and Redis: with Redis unreachable, each replica
    /// enforces quotas (provider rate limits, org limits) divided by this count.
    pub replicas: u32,
    /// One upstream request, rate-limit waits, redirects and body included (P3 retries
    /// each attempt within it; the walk's 60 s clock bounds them all).
    pub upstream_timeout_ms: u64,
    /// The largest upstream response body read; a longer one fails the request.
    pub upstream_max_body_bytes: usize,
    /// Largest request body the API reads (JSON, forms); a longer one is 413.
    pub request_max_bytes: usize,
    /// Largest OpenAPI document an import reads (GitHub's own is 13 MB); a longer one is
    /// 413. Read apart from `request_max_bytes`, parsed off the async workers, one import
    /// at a time per replica.
    pub openapi_import_max_bytes: usize,
    /// Tools offered directly before connected-app toolkits go behind tool search
    /// (D1), unless an agent sets its own `direct_tool_budget`.
    pub direct_tool_budget: u32,
    /// Public base URL of this service, for the connect links handed to end users
    /// (e.g. `https://loopgate.example.com`); defaults to `http://<bind>`.
    pub public_url: Option<String>,
    /// Reverse proxies in front of this service (comma-separated addresses or networks,
    /// e.g. `10.0.0.0/8,fd00::/8`): only for a request from one of them is the client
    /// address (that failed authentication is throttled by) read from `X-Forwarded-For`.
    pub trusted_proxies: Option<String>,
    /// On SIGTERM: how long running calls and runs may take to finish before they are
    /// cut (and their partial outcomes recorded) and the process exits.
    pub shutdown_grace_seconds: u64,

    // --- retention, see `crate::app::retention` ---
    /// Tool-call records (their stored outcomes included) are deleted this many days after
    /// the call started.
    pub retention_tool_calls_days: u32,
    /// Workflow runs are deleted this many days after they started.
    pub retention_workflow_runs_days: u32,
    /// Threads unused for this many days are deleted, with their calls and loaded tools.
    pub retention_threads_idle_days: u32,
    /// Connect links are deleted this many days after they expired or were used.
    pub retention_links_days: u32,
    /// Audit events (`GET /v1/audit-events`) are deleted this many days after the write.
    pub retention_audit_events_days: u32,
    /// Seconds between retention passes (each runs on one replica: an advisory lock).
    pub retention_interval_seconds: u64,
    /// Rows deleted per statement of a retention pass.
    pub retention_batch: u32,

    // --- schedules and webhook delivery, see `crate::automate` ---
    /// Run the scheduler and the webhook delivery workers on this replica (an API-only
    /// replica sets false; at least one replica must run them).
    pub automate_workers: bool,
    /// W6: the shortest interval a schedule's cron may fire at; a cron firing more often
    /// is refused (422).
    pub schedule_min_interval_seconds: u64,
    /// How often each replica looks for due schedules (the claim decides who runs them).
    pub schedule_tick_ms: u64,
    /// A scheduled run's lease, renewed by its replica every third of it; a run whose lease
    /// ran out (its replica died) is closed as `interrupted`.
    pub schedule_lease_seconds: u64,
    /// A due time found later than this is missed: `catch_up: "none"` does not run it.
    pub schedule_grace_seconds: u64,
    /// W7: the first wait before a failed delivery is tried again, doubling per attempt.
    pub webhook_retry_base_ms: u64,
    /// One delivery attempt (connect, send, answer).
    pub webhook_timeout_ms: u64,
    /// How often each replica looks for due deliveries.
    pub webhook_poll_ms: u64,
    /// Delivery attempts in flight on one replica.
    pub webhook_concurrency: u32,

    // --- engine bounds and budgets, see `crate::config::bounds` (defaults: `Limits`) ---
    /// P3: pages fetched per collection (per `_for_each` value).
    pub limit_pages_per_collection: u32,
    /// P3: upstream requests per tool call, retries included.
    pub limit_requests: u32,
    /// P3: merged rows of one call.
    pub limit_items: usize,
    /// P3: raw upstream bytes of one call.
    pub limit_bytes: usize,
    /// P3: wall clock of one call.
    pub limit_wall_seconds: u64,
    /// G1: the size guard's conversation budget, in tokens (an agent's `token_budget` wins).
    pub limit_token_budget: usize,
    /// E2: distinct `_for_each` values per call.
    pub limit_for_each_values: usize,
    /// E2: raw `_for_each` values accepted before de-duplication.
    pub limit_for_each_raw_values: usize,
    /// P2: page size asked for when the schema declares no maximum.
    pub limit_default_page_size: u32,
    /// S1: minimum spacing of progress reports.
    pub limit_progress_interval_ms: u64,
    /// P3: retries of one request after a transient failure.
    pub limit_retries: u32,
    /// P9: requests one walk keeps in flight.
    pub limit_concurrency: usize,
    /// Paths in `_fields` / `fields`.
    pub limit_fields: usize,
    /// Bytes of one dot-path.
    pub limit_path_bytes: usize,
    /// Segments of one dot-path.
    pub limit_path_segments: usize,
    /// Clauses in `_filter` / `filter`.
    pub limit_filter_clauses: usize,
    /// Values of one `in` clause.
    pub limit_in_values: usize,
    /// Q1: paths one `aggregate` may name.
    pub limit_aggregate_paths: usize,
    /// Q1: groups one `aggregate` answer shows.
    pub limit_aggregate_groups: usize,
    /// W1: steps in one workflow.
    pub limit_workflow_steps: usize,

    // --- CPU-bound work, see `crate::walk::cpu_jobs` ---
    /// Jobs proportional to a payload's size (parsing, `_filter`, `_fields`, the size
    /// guard, stored results) one org may run at once on the blocking pool.
    pub cpu_jobs_per_org: u32,
    /// Such jobs running at once on this replica, all orgs together.
    pub cpu_jobs: u32,
    /// Payloads up to this many bytes are handled in place on the async worker.
    pub cpu_inline_bytes: usize,

    // --- dataset cache, see `crate::results::cache_memory` ---
    /// Bytes of decoded cache entries and results presented from them that this replica
    /// keeps, so a hit neither moves nor parses the entry (0: off, every hit reads it whole).
    pub cache_memory_bytes: usize,
    /// The largest dataset cache entry (in Redis) a walk's set is stored as; a larger set
    /// is answered but not cached (its result says so).
    pub cache_max_entry_bytes: usize,

    // --- agents kept per replica, see `crate::call::agent_memory` ---
    /// The longest a replica uses an agent (and its thread) it remembers without reading
    /// it again, whatever the org's config epoch says: the bound on how long a write made
    /// outside the API (an operator's SQL) goes unseen (0: off, every call reads the agent).
    pub agent_memory_seconds: u64,

    // --- MCP servers as providers (M1), see `crate::upstream::mcp` ---
    /// How long an upstream MCP session is kept unused before it is ended (`DELETE`).
    pub mcp_session_idle_seconds: u64,

    // --- agents as MCP servers (M2), see `crate::mcp::server` ---
    /// How long a session of an agent's MCP server lives unused; then it is 404.
    pub mcp_server_session_idle_seconds: u64,
    // --- connected apps' OAuth (D4), see `crate::upstream::oauth_metadata` ---
    /// How long an authorization server's discovered metadata (RFC 8414 / OpenID
    /// discovery) is kept before it is fetched again (0: every use fetches it).
    pub oauth_metadata_ttl_seconds: u64,

    // --- tool search (D5), see `crate::embedding` ---
    /// The sentence-embedding model's directory (`scripts/setup-model` fills it): search
    /// ranks by meaning as well as by words. Missing or empty: lexical search only, said
    /// in the log, the `loopgate_search_semantic` gauge and `/readyz`.
    pub embedding_model_dir: String,

    // --- K1, see `crate::call::record_journal` ---
    /// The directory of this replica's journal of tool-call records not yet in Postgres:
    /// a record answered behind its call, or waiting while Postgres is out of reach, is
    /// replayed from it by the next replica on the same directory if this one dies. Shared
    /// by the replicas of one host or volume (each holds its own files). Empty: kept in
    /// memory only (a killed replica loses what Postgres had not taken).
    pub record_journal_dir: String,
}

/// `redis_timeout_ms`: 10 ms to 60 s.
const REDIS_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 10..=60_000;

/// `result_ttl_seconds`: a minute to a day (markers saying "expired" live a day longer).
const RESULT_TTL_SECONDS: std::ops::RangeInclusive<u64> = 60..=86_400;

/// `mcp_session_idle_seconds`: a second to a day.
const MCP_SESSION_IDLE_SECONDS: std::ops::RangeInclusive<u64> = 1..=86_400;

/// `mcp_server_session_idle_seconds`: a minute to 30 days.
const MCP_SERVER_SESSION_IDLE_SECONDS: std::ops::RangeInclusive<u64> = 60..=2_592_000;
/// `oauth_metadata_ttl_seconds`: at most a day.
const OAUTH_METADATA_MAX_SECONDS: u64 = 86_400;

/// `agent_memory_seconds`: at most this (memory is a cache, not a source of truth).
const AGENT_MEMORY_MAX_SECONDS: u64 = 300;

/// `openapi_import_max_bytes`: 64 KiB to 1 GiB.
const OPENAPI_IMPORT_MAX_BYTES: std::ops::RangeInclusive<usize> = (64 << 10)..=(1 << 30);

/// `cache_memory_bytes`, when not 0: 1 MiB to 64 GiB.
const CACHE_MEMORY_MIN: usize = 1 << 20;
const CACHE_MEMORY_MAX: usize = 64 << 30;

/// `cache_max_entry_bytes`: 64 KiB to 64 MiB. An entry is written in pieces but read whole
/// with one `GET` (`results::dataset_cache::read`, once per version and replica), which
/// must come back within `redis_timeout_ms`, and a set is at most about `limit_bytes`
/// (24 MiB by default) of upstream data anyway.
const CACHE_ENTRY_MIN: usize = 64 << 10;
const CACHE_ENTRY_MAX: usize = 64 << 20;

#[derive(Serialize)]
struct Defaults {
    bind: &'static str,
    token_issuer: &'static str,
    token_audience: &'static str,
    redis_timeout_ms: u64,
    result_ttl_seconds: u64,
    database_max_connections: u32,
    http_workers: u32,
    allow_private_upstreams: bool,
    org_requests_per_second: u32,
    org_concurrent_walks: u32,
    replicas: u32,
    upstream_timeout_ms: u64,
    upstream_max_body_bytes: usize,
    request_max_bytes: usize,
    openapi_import_max_bytes: usize,
    direct_tool_budget: u32,
    shutdown_grace_seconds: u64,
    retention_tool_calls_days: u32,
    retention_workflow_runs_days: u32,
    retention_threads_idle_days: u32,
    retention_links_days: u32,
    retention_audit_events_days: u32,
    retention_interval_seconds: u64,
    retention_batch: u32,
    automate_workers: bool,
    schedule_min_interval_seconds: u64,
    schedule_tick_ms: u64,
    schedule_lease_seconds: u64,
    schedule_grace_seconds: u64,
    webhook_retry_base_ms: u64,
    webhook_timeout_ms: u64,
    webhook_poll_ms: u64,
    webhook_concurrency: u32,
    cpu_jobs_per_org: u32,
    cpu_jobs: u32,
    cpu_inline_bytes: usize,
    cache_memory_bytes: usize,
    cache_max_entry_bytes: usize,
    agent_memory_seconds: u64,
    mcp_session_idle_seconds: u64,
    mcp_server_session_idle_seconds: u64,
    oauth_metadata_ttl_seconds: u64,
    embedding_model_dir: &'static str,
    record_journal_dir: &'static str,
}

const DEFAULTS: Defaults = Defaults {
    bind: "127.0.0.1:8080",
    token_issuer: "loopgate",
    token_audience: "loopgate-runtime",
    redis_timeout_ms: 500,
    result_ttl_seconds: 15 * 60,
    database_max_connections: 20,
    http_workers: 0,
    allow_private_upstreams: false,
    org_requests_per_second: 50,
    org_concurrent_walks: 8,
    replicas: 1,
    upstream_timeout_ms: 20_000,
    upstream_max_body_bytes: 24 * 1024 * 1024,
    request_max_bytes: 4 * 1024 * 1024,
    openapi_import_max_bytes: 64 * 1024 * 1024,
    direct_tool_budget: 15,
    shutdown_grace_seconds: 25,
    retention_tool_calls_days: 30,
    retention_workflow_runs_days: 30,
    retention_threads_idle_days: 30,
    retention_links_days: 1,
    retention_audit_events_days: 365,
    retention_interval_seconds: 600,
    retention_batch: 1000,
    automate_workers: true,
    schedule_min_interval_seconds: 60,
    schedule_tick_ms: 1000,
    schedule_lease_seconds: 30,
    schedule_grace_seconds: 60,
    webhook_retry_base_ms: 5000,
    webhook_timeout_ms: 10_000,
    webhook_poll_ms: 500,
    webhook_concurrency: 32,
    cpu_jobs_per_org: 2,
    cpu_jobs: 4,
    cpu_inline_bytes: 64 * 1024,
    cache_memory_bytes: 64 * 1024 * 1024,
    cache_max_entry_bytes: 8 * 1024 * 1024,
    agent_memory_seconds: 5,
    mcp_session_idle_seconds: 600,
    mcp_server_session_idle_seconds: 86_400,
    oauth_metadata_ttl_seconds: 3600,
    embedding_model_dir: ".data/models/all-minilm-l6-v2",
    record_journal_dir: ".data/records",
};

/// Every default: the service's, then the engine's bounds ([`crate::config::bounds`]).
fn defaults() -> Figment {
    Figment::from(Serialized::defaults(DEFAULTS)).merge(Serialized::defaults(
        crate::config::limit_defaults::LimitDefaults::new(),
    ))
}

/// Settings that are text whatever they look like: figment's environment provider would
/// read `LOOPGATE_TOKEN_SIGNING_KEY=0000…` as a number (and drop its leading zeros), so
/// these are taken from the environment verbatim instead.
const TEXT: &[&str] = &[
    "bind",
    "database_url",
    "redis_url",
    "admin_token",
    "credential_key",
    "token_signing_key",
    "token_issuer",
    "token_audience",
    "trusted_proxies",
    "embedding_model_dir",
    "record_journal_dir",
];

/// Merges each `TEXT` setting found in the environment as a string: `LOOPGATE_<NAME>`,
/// else (for the two URLs) the conventional `DATABASE_URL` / `REDIS_URL`.
fn with_text_from_env(mut figment: Figment, env: impl Fn(&str) -> Option<String>) -> Figment {
    for key in TEXT {
        let upper = key.to_ascii_uppercase();
        let unprefixed = matches!(*key, "database_url" | "redis_url");
        let value =
            env(&format!("LOOPGATE_{upper}")).or_else(|| unprefixed.then(|| env(&upper)).flatten());
        if let Some(v) = value {
            figment = figment.merge(Serialized::default(key, v));
        }
    }
    figment
}

/// One line naming each setting that did not parse and why, by the name it was given
/// in (`LOOPGATE_ORG_REQUESTS_PER_SECOND: invalid type: …`).
fn describe(e: figment::Error) -> anyhow::Error {
    let parts: Vec<String> = e
        .into_iter()
        .map(|e| {
            let key = e.path.join(".");
            let name = match &e.metadata {
                Some(m) if m.name.contains("environment") => {
                    format!("LOOPGATE_{}", key.to_ascii_uppercase().replace('.', "_"))
                }
                Some(m) => match &m.source {
                    Some(src) => format!("`{key}` in {src}"),
                    None => format!("`{key}` in {}", m.name),
                },
                None => format!("`{key}`"),
            };
            format!("{name}: {}", e.kind)
        })
        .collect();
    anyhow::anyhow!("invalid configuration: {}", parts.join("; "))
}

/// The parts of `Settings` that must be present and well-formed to serve.
pub struct Secrets {
    pub database_url: SecretString,
    pub admin_token: SecretString,
    pub credential_key: [u8; 32],
    pub token_signing_key: Vec<u8>,
}

impl Settings {
    /// Reads defaults → file → environment.
    pub fn load() -> anyhow::Result<Self> {
        let file = std::env::var("LOOPGATE_CONFIG").unwrap_or_else(|_| "loopgate.toml".into());
        let figment = defaults().merge(Toml::file(file)).merge(
            Env::prefixed("LOOPGATE_")
                .ignore(&["CONFIG"])
                .filter(|k| !TEXT.iter().any(|t| k == *t)),
        );
        with_text_from_env(figment, |name| std::env::var(name).ok())
            .extract()
            .map_err(describe)
    }

    /// Checks every required value and decodes keys; the error names what is missing.
    pub fn validate(&self) -> anyhow::Result<Secrets> {
        let mut missing = Vec::new();
        if self.database_url.is_none() {
            missing.push("DATABASE_URL (or LOOPGATE_DATABASE_URL)");
        }
        if self.admin_token.is_none() {
            missing.push("LOOPGATE_ADMIN_TOKEN");
        }
        if self.credential_key.is_none() {
            missing.push("LOOPGATE_CREDENTIAL_KEY (32 bytes, base64)");
        }
        if self.token_signing_key.is_none() {
            missing.push("LOOPGATE_TOKEN_SIGNING_KEY (at least 32 bytes)");
        }
        let (Some(db), Some(admin), Some(cred), Some(sign)) = (
            &self.database_url,
            &self.admin_token,
            &self.credential_key,
            &self.token_signing_key,
        ) else {
            bail!("missing required configuration: {}", missing.join(", "));
        };
        if admin.expose_secret().len() < 16 {
            bail!("LOOPGATE_ADMIN_TOKEN must be at least 16 characters");
        }
        let key = base64::engine::general_purpose::STANDARD
            .decode(cred.expose_secret().trim())
            .context("LOOPGATE_CREDENTIAL_KEY is not valid base64")?;
        let credential_key: [u8; 32] = key.try_into().map_err(|_| {
            anyhow::anyhow!("LOOPGATE_CREDENTIAL_KEY must decode to exactly 32 bytes")
        })?;
        let token_signing_key = sign.expose_secret().as_bytes().to_vec();
        if token_signing_key.len() < 32 {
            bail!("LOOPGATE_TOKEN_SIGNING_KEY must be at least 32 bytes");
        }
        if self.org_concurrent_walks == 0 || self.org_requests_per_second == 0 || self.replicas == 0
        {
            bail!("org_concurrent_walks, org_requests_per_second and replicas must be positive");
        }
        if self.upstream_timeout_ms == 0 || self.upstream_max_body_bytes == 0 {
            bail!("upstream_timeout_ms and upstream_max_body_bytes must be positive");
        }
        if !(64 * 1024..=256 * 1024 * 1024).contains(&self.request_max_bytes) {
            bail!(
                "LOOPGATE_REQUEST_MAX_BYTES must be between 65536 and 268435456 (it is {})",
                self.request_max_bytes
            );
        }
        if !OPENAPI_IMPORT_MAX_BYTES.contains(&self.openapi_import_max_bytes) {
            bail!(
                "LOOPGATE_OPENAPI_IMPORT_MAX_BYTES must be between {} and {} (it is {})",
                OPENAPI_IMPORT_MAX_BYTES.start(),
                OPENAPI_IMPORT_MAX_BYTES.end(),
                self.openapi_import_max_bytes
            );
        }
        if !(1..=10_000).contains(&self.database_max_connections) {
            bail!("LOOPGATE_DATABASE_MAX_CONNECTIONS must be between 1 and 10000");
        }
        if let Some(u) = &self.public_url {
            let ok = url::Url::parse(u.trim())
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
            if !ok {
                bail!("LOOPGATE_PUBLIC_URL must be an absolute http(s) URL (it is {u:?})");
            }
        }
        self.validate_ops()?;
        self.validate_limits()?;
        self.proxies()?;
        Ok(Secrets {
            database_url: db.clone(),
            admin_token: admin.clone(),
            credential_key,
            token_signing_key,
        })
    }
}

impl Settings {
    /// `trusted_proxies`, parsed (an empty list without it).
    pub fn proxies(&self) -> anyhow::Result<TrustedProxies> {
        TrustedProxies::parse(self.trusted_proxies.as_deref().unwrap_or(""))
            .map_err(|e| anyhow::anyhow!(e))
    }

    /// Schedules and webhook delivery: every interval positive and bounded.
    fn validate_automate(&self) -> anyhow::Result<()> {
        if !(1..=86_400).contains(&self.schedule_min_interval_seconds) {
            bail!("LOOPGATE_SCHEDULE_MIN_INTERVAL_SECONDS must be between 1 and 86400");
        }
        if !(50..=60_000).contains(&self.schedule_tick_ms)
            || !(50..=60_000).contains(&self.webhook_poll_ms)
        {
            bail!("LOOPGATE_SCHEDULE_TICK_MS and LOOPGATE_WEBHOOK_POLL_MS must be between 50 and 60000");
        }
        if !(1..=3600).contains(&self.schedule_lease_seconds)
            || !(1..=86_400).contains(&self.schedule_grace_seconds)
        {
            bail!("LOOPGATE_SCHEDULE_LEASE_SECONDS must be between 1 and 3600, LOOPGATE_SCHEDULE_GRACE_SECONDS between 1 and 86400");
        }
        if !(10..=3_600_000).contains(&self.webhook_retry_base_ms)
            || !(100..=120_000).contains(&self.webhook_timeout_ms)
        {
            bail!("LOOPGATE_WEBHOOK_RETRY_BASE_MS must be between 10 and 3600000, LOOPGATE_WEBHOOK_TIMEOUT_MS between 100 and 120000");
        }
        if self.http_workers > 256 {
            bail!("LOOPGATE_HTTP_WORKERS must be between 0 (one per CPU) and 256");
        }
        if !(1..=1024).contains(&self.webhook_concurrency) {
            bail!("LOOPGATE_WEBHOOK_CONCURRENCY must be between 1 and 1024");
        }
        Ok(())
    }

    /// Retention and CPU-bound work: every age, interval and bound positive, batches bounded.
    fn validate_ops(&self) -> anyhow::Result<()> {
        let days = [
            self.retention_tool_calls_days,
            self.retention_workflow_runs_days,
            self.retention_threads_idle_days,
            self.retention_links_days,
            self.retention_audit_events_days,
        ];
        // at least a day: retention of stored bodies relies on the records' age being far
        // longer than `call::call_records::BODY_REWRITE` (see `store::retention`)
        if days.contains(&0) || days.iter().any(|d| *d > 36_500) {
            bail!("retention_*_days must be between 1 and 36500");
        }
        if self.retention_interval_seconds == 0 || !(1..=100_000).contains(&self.retention_batch) {
            bail!("retention_interval_seconds must be positive and retention_batch between 1 and 100000");
        }
        self.validate_automate()?;
        if self.cpu_jobs_per_org == 0 || self.cpu_jobs == 0 || self.cpu_jobs_per_org > self.cpu_jobs
        {
            bail!(
                "cpu_jobs_per_org and cpu_jobs must be positive, cpu_jobs_per_org at most cpu_jobs"
            );
        }
        let memory = self.cache_memory_bytes;
        if memory != 0 && !(CACHE_MEMORY_MIN..=CACHE_MEMORY_MAX).contains(&memory) {
            bail!(
                "LOOPGATE_CACHE_MEMORY_BYTES must be 0 (off) or between {CACHE_MEMORY_MIN} and {CACHE_MEMORY_MAX} (it is {memory})"
            );
        }
        if !REDIS_TIMEOUT_MS.contains(&self.redis_timeout_ms) {
            bail!(
                "LOOPGATE_REDIS_TIMEOUT_MS must be between {} and {} (it is {})",
                REDIS_TIMEOUT_MS.start(),
                REDIS_TIMEOUT_MS.end(),
                self.redis_timeout_ms
            );
        }
        if !RESULT_TTL_SECONDS.contains(&self.result_ttl_seconds) {
            bail!(
                "LOOPGATE_RESULT_TTL_SECONDS must be between {} and {} (it is {})",
                RESULT_TTL_SECONDS.start(),
                RESULT_TTL_SECONDS.end(),
                self.result_ttl_seconds
            );
        }
        let entry = self.cache_max_entry_bytes;
        if !(CACHE_ENTRY_MIN..=CACHE_ENTRY_MAX).contains(&entry) {
            bail!(
                "LOOPGATE_CACHE_MAX_ENTRY_BYTES must be between {CACHE_ENTRY_MIN} and {CACHE_ENTRY_MAX} (it is {entry})"
            );
        }
        if self.agent_memory_seconds > AGENT_MEMORY_MAX_SECONDS {
            bail!(
                "LOOPGATE_AGENT_MEMORY_SECONDS must be between 0 (off) and {AGENT_MEMORY_MAX_SECONDS} (it is {})",
                self.agent_memory_seconds
            );
        }
        if !MCP_SESSION_IDLE_SECONDS.contains(&self.mcp_session_idle_seconds) {
            bail!(
                "LOOPGATE_MCP_SESSION_IDLE_SECONDS must be between {} and {} (it is {})",
                MCP_SESSION_IDLE_SECONDS.start(),
                MCP_SESSION_IDLE_SECONDS.end(),
                self.mcp_session_idle_seconds
            );
        }
        if !MCP_SERVER_SESSION_IDLE_SECONDS.contains(&self.mcp_server_session_idle_seconds) {
            bail!(
                "LOOPGATE_MCP_SERVER_SESSION_IDLE_SECONDS must be between {} and {} (it is {})",
                MCP_SERVER_SESSION_IDLE_SECONDS.start(),
                MCP_SERVER_SESSION_IDLE_SECONDS.end(),
                self.mcp_server_session_idle_seconds
            );
        }
        if self.oauth_metadata_ttl_seconds > OAUTH_METADATA_MAX_SECONDS {
            bail!(
                "LOOPGATE_OAUTH_METADATA_TTL_SECONDS must be between 0 and {OAUTH_METADATA_MAX_SECONDS} (it is {})",
                self.oauth_metadata_ttl_seconds
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete() -> Settings {
        let env = |name: &str| match name {
            "LOOPGATE_TOKEN_SIGNING_KEY" => Some("0".repeat(40)),
            "LOOPGATE_ADMIN_TOKEN" => Some("1234567890123456789".into()),
            "LOOPGATE_CREDENTIAL_KEY" => Some(format!("{}=", "A".repeat(43))),
            "DATABASE_URL" => Some("postgres://raw/db".into()),
            _ => None,
        };
        with_text_from_env(defaults(), env).extract().unwrap()
    }

    /// A documented setting is checked at start: a pool of 0 connections would start and
    /// then time out every request; a public URL that is not one breaks every connect link.
    #[test]
    fn pool_size_and_public_url_are_validated() {
        assert!(complete().validate().is_ok());
        let mut s = complete();
        s.database_max_connections = 0;
        let e = s
            .validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("LOOPGATE_DATABASE_MAX_CONNECTIONS"), "{e}");
        for bad in ["loopgate.example.com", "ftp://x.example", "not a url"] {
            let mut s = complete();
            s.public_url = Some(bad.into());
            let e = s
                .validate()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("LOOPGATE_PUBLIC_URL"), "{bad}: {e}");
        }
        let mut s = complete();
        s.public_url = Some("https://gate.example.com/".into());
        assert!(s.validate().is_ok());
        for (bytes, ok) in [(0, true), (1 << 20, true), (1024, false), (1 << 40, false)] {
            let mut s = complete();
            s.cache_memory_bytes = bytes;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{bytes}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_CACHE_MEMORY_BYTES")));
        }
        for (bytes, ok) in [
            (0, false),
            ((64 << 10) - 1, false),
            (64 << 10, true),
            (64 << 20, true),
            ((64 << 20) + 1, false),
        ] {
            let mut s = complete();
            s.cache_max_entry_bytes = bytes;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{bytes}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_CACHE_MAX_ENTRY_BYTES")));
        }
        for (ms, ok) in [
            (0, false),
            (9, false),
            (10, true),
            (500, true),
            (60_000, true),
            (60_001, false),
        ] {
            let mut s = complete();
            s.redis_timeout_ms = ms;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{ms}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_REDIS_TIMEOUT_MS")));
        }
        for (seconds, ok) in [
            (59, false),
            (60, true),
            (900, true),
            (86_400, true),
            (86_401, false),
        ] {
            let mut s = complete();
            s.result_ttl_seconds = seconds;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{seconds}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_RESULT_TTL_SECONDS")));
        }
        for (seconds, ok) in [(0, true), (5, true), (300, true), (301, false)] {
            let mut s = complete();
            s.agent_memory_seconds = seconds;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{seconds}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_AGENT_MEMORY_SECONDS")));
        }
        for (seconds, ok) in [(0, false), (1, true), (86_400, true), (86_401, false)] {
            let mut s = complete();
            s.mcp_session_idle_seconds = seconds;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{seconds}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_MCP_SESSION_IDLE_SECONDS")));
        }
        for (seconds, ok) in [
            (59, false),
            (60, true),
            (2_592_000, true),
            (2_592_001, false),
        ] {
            let mut s = complete();
            s.mcp_server_session_idle_seconds = seconds;
            let e = s.validate().err().map(|e| e.to_string());
            assert_eq!(e.is_none(), ok, "{seconds}: {e:?}");
            assert!(e.is_none_or(|e| e.contains("LOOPGATE_MCP_SERVER_SESSION_IDLE_SECONDS")));
        }
        for bad in [0, 1024, (1 << 30) + 1] {
            let mut s = complete();
            s.openapi_import_max_bytes = bad;
            let e = s
                .validate()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains("LOOPGATE_OPENAPI_IMPORT_MAX_BYTES"),
                "{bad}: {e}"
            );
        }
        for bad in [0, 1024, 1 << 30] {
            let mut s = complete();
            s.request_max_bytes = bad;
            let e = s
                .validate()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("LOOPGATE_REQUEST_MAX_BYTES"), "{bad}: {e}");
        }
    }

    #[test]
    fn secrets_are_text_whatever_they_look_like() {
        let env = |name: &str| match name {
            "LOOPGATE_TOKEN_SIGNING_KEY" => Some("0".repeat(40)),
            "LOOPGATE_ADMIN_TOKEN" => Some("1234567890123456789".into()),
            "DATABASE_URL" => Some("postgres://raw/db".into()),
            "LOOPGATE_REDIS_URL" => Some("redis://prefixed".into()),
            "REDIS_URL" => Some("redis://raw".into()),
            _ => None,
        };
        let s: Settings = with_text_from_env(defaults(), env).extract().unwrap();
        let text = |v: &Option<SecretString>| v.as_ref().map(|v| v.expose_secret().to_string());
        assert_eq!(text(&s.token_signing_key), Some("0".repeat(40)));
        assert_eq!(text(&s.admin_token).as_deref(), Some("1234567890123456789"));
        assert_eq!(text(&s.database_url).as_deref(), Some("postgres://raw/db"));
        assert_eq!(text(&s.redis_url).as_deref(), Some("redis://prefixed"));
        assert!(s
            .validate()
            .is_err_and(|e| e.to_string().contains("LOOPGATE_CREDENTIAL_KEY")));
    }
}
