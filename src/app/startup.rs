//! Builds the application from `Settings` over a `TcpListener`, so tests bind port 0.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument as _;

use actix_web::dev::{Server, Service as _};
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use futures_util::FutureExt as _;
use secrecy::ExposeSecret;

use crate::api::state::AppState;
use crate::auth::tokens::TokenService;
use crate::call::event_log::EventLog;
use crate::call::{Runtime, RuntimeParts};
use crate::config::settings::Settings;
use crate::crypto::Cipher;
use crate::kv::Kv;
use crate::results::wall_clock::{SystemWallClock, WallClock};
use crate::telemetry::metrics::Metrics;
use crate::upstream::{RateLimits, UpstreamClient, UpstreamClientConfig};
use crate::walk::drain::Drain;
use crate::walk::walk_slots::WalkSlots;
use crate::walk::{Walker, WalkerParts};
use crate::{api, store};

pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
}

impl Application {
    /// Connects to Postgres (and Redis, whose eviction policy it checks once), migrates,
    /// and binds the listener.
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, Arc::new(SystemWallClock)).await
    }

    /// Like `build`, with the wall clock cache freshness is judged by (tests move it).
    pub async fn build_with_clock(
        settings: Settings,
        clock: Arc<dyn WallClock>,
    ) -> anyhow::Result<Self> {
        let secrets = settings.validate()?;
        let pool = store::connect(
            secrets.database_url.expose_secret(),
            settings.database_max_connections,
        )
        .await
        .context("could not connect to Postgres (check DATABASE_URL)")?;
        store::migrate(&pool)
            .await
            .context("database migration failed")?;
        let redis_budget = std::time::Duration::from_millis(settings.redis_timeout_ms);
        let result_ttl = std::time::Duration::from_secs(settings.result_ttl_seconds);
        let redis = match &settings.redis_url {
            None => None,
            Some(url) => Some(
                crate::kv::connect(url.expose_secret(), redis_budget)
                    .context("invalid REDIS_URL")?,
            ),
        };
        // keys must live until their TTL: a policy that evicts is logged, never fatal
        if let Some(url) = &settings.redis_url {
            crate::kv::eviction::check(url.expose_secret(), redis_budget).await;
        }
        // followers of running calls hold a pub/sub connection each, outside the pool
        let events = match (&redis, &settings.redis_url) {
            (Some(pool), Some(url)) => EventLog::new(
                Some((
                    pool.clone(),
                    redis::Client::open(url.expose_secret()).context("invalid REDIS_URL")?,
                )),
                result_ttl,
            ),
            _ => EventLog::new(None, result_ttl),
        };
        let cipher = Cipher::new(&secrets.credential_key);
        let tokens = TokenService::new(
            &secrets.token_signing_key,
            cipher.clone(),
            &settings.token_issuer,
            &settings.token_audience,
        )
        .context("invalid token signing key")?;
        let listener = TcpListener::bind(&settings.bind)
            .with_context(|| format!("could not bind {}", settings.bind))?;
        let port = listener.local_addr()?.port();
        let metrics = Arc::new(Metrics::default());
        // K1: the journal that keeps records waiting for Postgres past this process
        let journal = (!settings.record_journal_dir.is_empty())
            .then(|| std::path::Path::new(&settings.record_journal_dir));
        let records = crate::call::call_records::Records::connect(
            secrets.database_url.expose_secret(),
            metrics.clone(),
            journal,
        )
        .await?;
        let quota = crate::quota::Shared::new(redis.clone(), settings.replicas, metrics.clone());
        let limits = settings.engine_limits();
        let walker = Walker::new(WalkerParts {
            // K2: stored results Redis does not take are kept in Postgres too
            kv: Kv::new(
                redis.clone(),
                Some(metrics.clone()),
                redis_budget,
                result_ttl,
            )
            .with_copies(pool.clone()),
            http: UpstreamClient::new(UpstreamClientConfig {
                allow_private: settings.allow_private_upstreams,
                timeout: std::time::Duration::from_millis(settings.upstream_timeout_ms),
                max_body_bytes: settings.upstream_max_body_bytes,
                ..UpstreamClientConfig::default()
            }),
            mcp_sessions: crate::upstream::McpSessions::new(
                std::time::Duration::from_secs(settings.mcp_session_idle_seconds),
                crate::upstream::mcp::SESSIONS_MAX,
            ),
            rate_limits: RateLimits::across_replicas(quota.clone()),
            slots: WalkSlots::across_replicas(
                settings.org_concurrent_walks as usize,
                quota.clone(),
                limits.wall,
            ),
            limits,
            metrics: metrics.clone(),
            coalescer: Default::default(),
            fingerprint_key: crate::crypto::sha256(
                &[&secrets.credential_key[..], b"cache-fingerprint"].concat(),
            ),
            clock,
            drain: Drain::new(),
            cache_memory: crate::results::cache_memory::CacheMemory::new(
                settings.cache_memory_bytes,
                metrics.clone(),
            ),
            cache_max_entry_bytes: settings.cache_max_entry_bytes,
            cpu: crate::walk::cpu_jobs::Cpu::new(
                settings.cpu_jobs_per_org as usize,
                settings.cpu_jobs as usize,
                settings.cpu_inline_bytes,
                metrics.clone(),
            ),
        });
        // K5: the result store notes when its data began (a lost result is told apart)
        if let Err(e) = crate::results::stored_results::mark_store_born(walker.kv()).await {
            tracing::debug!(error = %e, "could not note when the result store began");
        }
        let runtime = Runtime::new(RuntimeParts {
            walker,
            pool: pool.clone(),
            cipher: cipher.clone(),
            direct_tool_budget: settings.direct_tool_budget as usize,
            search_indexes: crate::call::offered_tools::IndexCache::new(
                crate::call::tool_vectors::Semantic::from_setting(&settings.embedding_model_dir),
            ),
            public_url: settings
                .public_url
                .clone()
                .map(|u| u.trim_end_matches('/').to_string())
                .unwrap_or_else(|| format!("http://127.0.0.1:{port}")),
            oauth: crate::upstream::oauth::OAuthHttp::new(settings.allow_private_upstreams)
                .with_metadata_ttl(std::time::Duration::from_secs(
                    settings.oauth_metadata_ttl_seconds,
                )),
            events,
            compiled: Default::default(),
            refresh_gates: Default::default(),
            agent_memory: crate::call::agent_memory::AgentMemory::new(
                crate::call::agent_memory::max_age(&settings),
            ),
            records,
            thread_touch: crate::call::threads::touch_interval(
                crate::app::retention::Policy::from_settings(&settings).threads_idle,
            ),
        });
        let org_limiter =
            crate::quota::org::OrgRequests::new(settings.org_requests_per_second, quota.clone());
        let auth_guard = crate::auth::guard::AuthGuard::behind(settings.proxies()?);
        let state = web::Data::new(AppState {
            pool,
            redis,
            cipher,
            tokens,
            admin_token: secrets.admin_token,
            settings,
            metrics,
            runtime,
            org_limiter,
            quota,
            auth_guard,
            import_turns: Arc::new(tokio::sync::Semaphore::new(1)),
        });
        crate::app::retention::spawn(
            state.pool.clone(),
            crate::app::retention::Policy::from_settings(&state.settings),
            state.metrics.clone(),
        );
        if state.settings.automate_workers {
            spawn_automation(&state);
        }
        let server = run(listener, state.clone())?;
        Ok(Self {
            port,
            server,
            state,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully: drains (readiness off,
    /// new calls refused), lets running calls and runs finish within
    /// `shutdown_grace_seconds`, cuts what still runs so it records an honest partial
    /// outcome, and stops.
    pub async fn run_until_signalled(self) -> anyhow::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
        let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
        let handle = self.server.handle();
        let drain = self.state.runtime.walker().drain().clone();
        let records = self.state.runtime.records().clone();
        let state = self.state.clone();
        let grace = Duration::from_secs(self.state.settings.shutdown_grace_seconds);
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: shutting down gracefully"),
                _ = int.recv() => tracing::info!("SIGINT: shutting down gracefully"),
            }
            drain.shut_down(grace, CUT_MARGIN).await;
            // M1: open MCP sessions are ended at their servers, briefly, together
            let walker = state.runtime.walker();
            walker
                .mcp_sessions()
                .end_all(walker.http(), CUT_MARGIN)
                .await;
            // what the drained calls queued is written before the process ends
            let _ = tokio::time::timeout(CUT_MARGIN, records.flush()).await;
            // K1: whatever is still running here is closed by the next replica that looks
            let _ = tokio::time::timeout(CUT_MARGIN, records.leave()).await;
            handle.stop(true).await;
        });
        self.server.await.context("server failed")
    }
}

/// Starts this replica's scheduler and webhook delivery workers (W6, W7); every replica
/// runs both, Postgres' claims decide who does what.
fn spawn_automation(state: &web::Data<AppState>) {
    let s = &state.settings;
    let cfg = crate::automate::scheduler::Config {
        tick: Duration::from_millis(s.schedule_tick_ms),
        lease: Duration::from_secs(s.schedule_lease_seconds),
        grace: Duration::from_secs(s.schedule_grace_seconds),
    };
    // scheduled runs execute as local tasks, like the API's runs on its workers: on a
    // thread of their own, so they never wait behind a request's worker
    let holder: Arc<dyn crate::automate::HasRuntime> = state.clone().into_inner();
    let thread = std::thread::Builder::new()
        .name("loopgate-scheduler".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return tracing::error!(error = %e, "the scheduler could not start"),
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, crate::automate::scheduler::run(holder, cfg));
        });
    if let Err(e) = thread {
        tracing::error!(error = %e, "the scheduler thread could not start");
    }
    let deliverer = crate::automate::delivery::Deliverer {
        pool: state.pool.clone(),
        cipher: state.cipher.clone(),
        // the SSRF guard of every upstream request; a redirect is an answer, not followed
        http: UpstreamClient::new(UpstreamClientConfig {
            allow_private: s.allow_private_upstreams,
            timeout: Duration::from_millis(s.webhook_timeout_ms),
            max_body_bytes: 256 * 1024,
            max_redirects: 0,
            ..UpstreamClientConfig::default()
        }),
        metrics: state.metrics.clone(),
        drain: state.runtime.walker().drain().clone(),
        cfg: crate::automate::delivery::Config {
            poll: Duration::from_millis(s.webhook_poll_ms),
            retry_base: Duration::from_millis(s.webhook_retry_base_ms),
            concurrency: s.webhook_concurrency as usize,
        },
    };
    Arc::new(deliverer).spawn();
}

/// O1: the request's server span, with OpenTelemetry's HTTP attributes. Named
/// `{method} {route}` (the route's pattern, never the path: a path can hold a credential,
/// `/connect/{link}`, and would make every id a span name of its own); `url.path` and
/// `url.query` with their secrets redacted (`telemetry::http_attrs`).
fn server_span(
    req: &actix_web::dev::ServiceRequest,
    method: &actix_web::http::Method,
    pattern: Option<&str>,
) -> tracing::Span {
    use crate::telemetry::http_attrs::{host_and_port, redacted_path, redacted_query};
    let info = req.connection_info().clone();
    let scheme = info.scheme().to_string();
    let default_port = if scheme == "https" { 443 } else { 80 };
    let (address, port) = host_and_port(info.host(), default_port);
    let path = redacted_path(req.path(), pattern.unwrap_or_default());
    let name = match pattern {
        Some(route) => format!("{method} {route}"),
        None => method.to_string(),
    };
    let version = match req.version() {
        actix_web::http::Version::HTTP_10 => "1.0",
        actix_web::http::Version::HTTP_2 => "2",
        actix_web::http::Version::HTTP_3 => "3",
        _ => "1.1",
    };
    let span = tracing::info_span!(
        "http_request",
        otel.name = %name,
        otel.kind = "server",
        http.request.method = %method,
        http.route = tracing::field::Empty,
        url.scheme = %scheme,
        url.path = %path,
        url.query = tracing::field::Empty,
        server.address = %address,
        server.port = i64::from(port),
        network.protocol.version = version,
        user_agent.original = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    if let Some(route) = pattern {
        span.record("http.route", route);
    }
    let query = req.query_string();
    if !query.is_empty() {
        span.record("url.query", redacted_query(query, None).as_str());
    }
    if let Some(ua) = req
        .headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
    {
        span.record("user_agent.original", ua);
    }
    span
}

/// Before the end of the grace period, running walks are cut this long ahead so their
/// partial outcomes are stored and recorded in time.
const CUT_MARGIN: Duration = Duration::from_secs(3);

fn run(listener: TcpListener, state: web::Data<AppState>) -> anyhow::Result<Server> {
    let max_body = state.settings.request_max_bytes;
    let workers = match state.settings.http_workers {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        n => n as usize,
    };
    let server = HttpServer::new(move || {
        // called on each worker thread: its Redis commands go on a connection of its own
        crate::kv::adopt_this_thread();
        let metrics = state.metrics.clone();
        App::new()
            .app_data(state.clone())
            .wrap(
                actix_web::middleware::ErrorHandlers::new().handler(
                    actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
                    api::problem_413,
                ),
            )
            .wrap_fn(move |req, srv| {
                let started = std::time::Instant::now();
                let metrics = metrics.clone();
                let method = req.method().clone();
                // the route's pattern, never the path: a path can hold a credential
                // (`/connect/{link}`) and would make every id a span name of its own
                let pattern = req.match_pattern();
                let route = pattern.clone().unwrap_or_else(|| "unmatched".into());
                let span = server_span(&req, &method, pattern.as_deref());
                let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
                crate::telemetry::traces::parent_from(&span, header("traceparent"), header("tracestate"));
                let in_span = span.clone();
                srv.call(req)
                    .map(move |res| {
                        if let Ok(r) = &res {
                            let status = r.status().as_u16();
                            metrics.observe_http(status, started.elapsed().as_micros() as u64);
                            in_span.record("http.response.status_code", i64::from(status));
                            // O1: a server span's error is a 5xx (a 4xx is the caller's)
                            if status >= 500 {
                                in_span.record("error.type", status.to_string().as_str());
                            }
                            tracing::info!(%method, %route, status, elapsed_ms = started.elapsed().as_millis() as u64, "request");
                        }
                        res
                    })
                    .instrument(span)
                    .instrument(crate::stage!("request"))
            })
            .configure(|cfg| api::configure(cfg, max_body))
    })
    .workers(workers)
    .listen(listener)?
    // shutdown is `run_until_signalled`'s (the drain); connections left after it get 5 s
    .disable_signals()
    .shutdown_timeout(5)
    .run();
    Ok(server)
}
