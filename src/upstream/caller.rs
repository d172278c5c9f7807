//! [`UpstreamClient`]: sends one built request (or a next-page URL) through the guarded HTTP
//! client, with the credential, rate-limit permits, manual redirects, the whole-call
//! timeout and the response byte cap.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use loopgate_engine::ports::{next_page_on_origin, LinkRefusal};
use reqwest::header::{HeaderMap, CONTENT_TYPE, LOCATION};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};
use url::Url;

use super::build::{self, Body};
use super::credential::{credential, header_map, strip_query, WireCredential};
use super::error::Redactor;
use super::response::{self, ReadError, ERROR_BODY_BYTES};
use super::ssrf;
use super::{
    BodyWatch, CallError, ProviderLimiter, RawResponse, Request, Target, UpstreamClientConfig,
};
use crate::telemetry::http_attrs::redacted_url;

/// Headers never carried to another origin (besides the provider's own credential).
const CROSS_ORIGIN_DROPPED: &[&str] = &[
    "authorization",
    "cookie",
    "proxy-authorization",
    // the trace context goes to the provider only (`Target::propagate_trace`)
    "traceparent",
    "tracestate",
];

/// The process's upstream HTTP client (and its connection pool): build one, share it.
/// A clone shares the pool (for work that outlives a borrow, such as ending sessions).
#[derive(Clone)]
pub struct UpstreamClient {
    /// `Err` when the client could not be built; every call then fails with it
    /// (never with an unguarded client).
    client: Result<reqwest::Client, String>,
    cfg: UpstreamClientConfig,
    /// Tells this client's copies on HTTP worker threads apart ([`UpstreamClient::http`]).
    id: u64,
}

thread_local! {
    /// An HTTP worker thread's own copies of the clients used there (see
    /// [`UpstreamClient::http`]); a process has one client, a test process many.
    static OWN: std::cell::RefCell<Vec<(u64, reqwest::Client)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Client copies one thread keeps.
const OWN_PER_THREAD: usize = 4;

fn next_id() -> u64 {
    static IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One HTTP request of the redirect chain.
struct Hop {
    method: Method,
    url: Url,
    body: Option<Body>,
}

impl UpstreamClient {
    /// Never fails: should the HTTP client not build (no TLS backend), the error is
    /// logged and every call returns it as [`CallError::Misconfigured`]. Use
    /// [`UpstreamClient::try_new`] to fail at start instead.
    pub fn new(cfg: UpstreamClientConfig) -> Self {
        let client = Self::client(&cfg);
        if let Err(e) = &client {
            tracing::error!(error = %e, "the upstream HTTP client could not be built");
        }
        UpstreamClient {
            client,
            cfg,
            id: next_id(),
        }
    }

    pub fn try_new(cfg: UpstreamClientConfig) -> Result<Self, CallError> {
        let client = Self::client(&cfg).map_err(CallError::Misconfigured)?;
        Ok(UpstreamClient {
            client: Ok(client),
            cfg,
            id: next_id(),
        })
    }

    /// The client to send with from this thread: on an HTTP worker thread
    /// (`kv::adopt_this_thread`) a copy of its own, built alike and with a connection pool
    /// of its own — a pooled connection is driven by the runtime that opened it, so one
    /// pool shared by every worker handed each request to another thread and back (as
    /// `kv::connection` measured for Redis); elsewhere the process's.
    fn http(&self) -> Result<reqwest::Client, CallError> {
        let shared = self
            .client
            .as_ref()
            .map_err(|e| CallError::Misconfigured(e.clone()))?;
        if !crate::kv::this_thread_adopted() {
            return Ok(shared.clone());
        }
        Ok(OWN.with(|own| {
            let mut own = own.borrow_mut();
            if let Some((_, c)) = own.iter().find(|(id, _)| *id == self.id) {
                return c.clone();
            }
            match Self::client(&self.cfg) {
                Ok(c) => {
                    if own.len() >= OWN_PER_THREAD {
                        own.remove(0);
                    }
                    own.push((self.id, c.clone()));
                    c
                }
                Err(_) => shared.clone(),
            }
        }))
    }

    fn client(cfg: &UpstreamClientConfig) -> Result<reqwest::Client, String> {
        ssrf::guarded_client(cfg.allow_private)
            .connect_timeout(cfg.connect_timeout)
            .user_agent(cfg.user_agent.clone())
            .build()
            .map_err(|e| format!("HTTP client: {e}"))
    }

    pub fn config(&self) -> &UpstreamClientConfig {
        &self.cfg
    }

    /// Calls the tool with `args`, within the configured timeout.
    pub async fn call(
        &self,
        target: &Target,
        args: &Map<String, Value>,
        rate: Option<&ProviderLimiter>,
    ) -> Result<RawResponse, CallError> {
        self.send(target, Request::Args(args), rate, self.cfg.timeout)
            .await
    }

    /// Requests a next-page URL (GET) on the provider's origin, with the credential.
    pub async fn call_url(
        &self,
        target: &Target,
        next_url: &str,
        rate: Option<&ProviderLimiter>,
    ) -> Result<RawResponse, CallError> {
        self.send(target, Request::NextUrl(next_url), rate, self.cfg.timeout)
            .await
    }

    /// The general form: `timeout` (capped by the configured one) bounds everything,
    /// waiting for rate-limit permits included.
    pub async fn send(
        &self,
        target: &Target,
        request: Request<'_>,
        rate: Option<&ProviderLimiter>,
        timeout: Duration,
    ) -> Result<RawResponse, CallError> {
        let redactor = Redactor::new(target.credential.as_ref());
        let base = target.template.base()?;
        let (hop, headers) = match request {
            Request::Args(args) => {
                let method =
                    Method::from_bytes(target.method.trim().to_ascii_uppercase().as_bytes())
                        .map_err(|_| {
                            CallError::Misconfigured(format!(
                                "invalid HTTP method {:?}",
                                target.method
                            ))
                        })?;
                let built = target.template.build(args)?;
                let hop = Hop {
                    method,
                    url: built.url,
                    body: built.body,
                };
                (hop, built.headers)
            }
            Request::NextUrl(next) => {
                let url = next_page(&base, next, &redactor)?;
                let hop = Hop {
                    method: Method::GET,
                    url,
                    body: None,
                };
                (hop, Vec::new())
            }
            Request::Rpc { body, headers } | Request::RpcWatched { body, headers, .. } => {
                let hop = Hop {
                    method: Method::POST,
                    url: base.clone(),
                    body: Some(Body {
                        content_type: "application/json".into(),
                        bytes: body.to_vec(),
                    }),
                };
                (hop, headers.to_vec())
            }
            Request::End { headers } => {
                let hop = Hop {
                    method: Method::DELETE,
                    url: base.clone(),
                    body: None,
                };
                (hop, headers.to_vec())
            }
        };
        let watch = match request {
            Request::RpcWatched { watch, .. } => Some(watch),
            _ => None,
        };
        let credential = credential(target)?;
        let mut headers = header_map(&headers)?;
        if target.propagate_trace {
            for (name, value) in crate::telemetry::traces::inject(&tracing::Span::current()) {
                if let Ok(v) = reqwest::header::HeaderValue::from_str(&value) {
                    headers.insert(name, v);
                }
            }
        }
        let idempotent = is_idempotent(&hop.method);
        let sent = AtomicBool::new(false);
        let limit = timeout.min(self.cfg.timeout);
        let run = self.run(
            &base,
            hop,
            headers,
            &credential,
            rate,
            (&redactor, watch),
            &sent,
        );
        match tokio::time::timeout(limit, run).await {
            Ok(result) => result,
            Err(_) => Err(CallError::Timeout {
                retryable: idempotent || !sent.load(Ordering::Relaxed),
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        base: &Url,
        mut hop: Hop,
        headers: HeaderMap,
        credential: &WireCredential,
        rate: Option<&ProviderLimiter>,
        (redactor, watch): (&Redactor, Option<BodyWatch<'_>>),
        sent: &AtomicBool,
    ) -> Result<RawResponse, CallError> {
        let client = self.http()?;
        let origin = base.origin();
        let mut with_credential = true;
        for _ in 0..=self.cfg.max_redirects {
            ssrf::check_url(&hop.url, self.cfg.allow_private)?;
            // Once the chain leaves the provider's origin, the credential stays behind
            // for the rest of it, even if a later hop comes back.
            if hop.url.origin() != origin {
                with_credential = false;
            }
            let idempotent = is_idempotent(&hop.method);
            let mut url = hop.url.clone();
            let mut hop_headers = headers.clone();
            match credential {
                WireCredential::Query(name, value) => {
                    strip_query(&mut url, name);
                    if with_credential {
                        url.query_pairs_mut().append_pair(name, value);
                    }
                }
                WireCredential::Header(name, value) => {
                    hop_headers.remove(name);
                    if with_credential {
                        hop_headers.insert(name.clone(), value.clone());
                    }
                }
                WireCredential::None => {}
            }
            if !with_credential {
                for name in CROSS_ORIGIN_DROPPED {
                    hop_headers.remove(*name);
                }
            }
            // O1: on the upstream request's span, where it has the fields
            let span = tracing::Span::current();
            let query_credential = match credential {
                WireCredential::Query(name, _) => Some(name.as_str()),
                _ => None,
            };
            let full = redacted_url(&url, query_credential);
            span.record("url.full", full.as_str());
            span.record("server.address", url.host_str().unwrap_or_default());
            if let Some(port) = url.port_or_known_default() {
                span.record("server.port", i64::from(port));
            }
            if let Some(limiter) = rate {
                let waiting = std::time::Instant::now();
                limiter.until_ready().await;
                span.record(
                    "loopgate.rate_limit_wait_ms",
                    waiting.elapsed().as_millis() as u64,
                );
            }
            let mut builder = client.request(hop.method.clone(), url).headers(hop_headers);
            if let Some(body) = &hop.body {
                builder = builder
                    .header(CONTENT_TYPE, body.content_type.as_str())
                    .body(body.bytes.clone());
            }
            sent.store(true, Ordering::Relaxed);
            let mut resp = builder
                .send()
                .await
                .map_err(|e| transport_error(e, idempotent, redactor))?;
            let status = resp.status();
            if status.is_redirection() {
                if let Some(next) = redirect_target(&hop.url, status, resp.headers()) {
                    if status == StatusCode::SEE_OTHER
                        || (hop.method == Method::POST && matches!(status.as_u16(), 301 | 302))
                    {
                        if hop.method != Method::HEAD {
                            hop.method = Method::GET;
                        }
                        hop.body = None;
                    }
                    hop.url = next;
                    continue;
                }
            }
            if status.is_success() {
                let headers = header_pairs(resp.headers());
                let cap = self.cfg.max_body_bytes;
                let body = match response::read_capped(&mut resp, cap, watch).await {
                    Ok(body) => body,
                    Err(ReadError::TooLarge) => {
                        return Err(CallError::TooLarge {
                            limit: self.cfg.max_body_bytes,
                        })
                    }
                    Err(ReadError::Transport(e)) => {
                        return Err(transport_error(e, idempotent, redactor))
                    }
                };
                return Ok(RawResponse {
                    status: status.as_u16(),
                    headers: headers
                        .into_iter()
                        .map(|(k, v)| (k, redactor.clean(&v)))
                        .collect(),
                    body: redactor.clean_bytes(body),
                });
            }
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let cap = ERROR_BODY_BYTES.min(self.cfg.max_body_bytes);
            let body = response::read_prefix(&mut resp, cap).await;
            return Err(CallError::from_status(
                status.as_u16(),
                retry_after.as_deref(),
                redactor.excerpt(&body),
                idempotent,
            ));
        }
        Err(CallError::TooManyRedirects {
            limit: self.cfg.max_redirects,
        })
    }
}

/// P5: the one owner of the next-page origin rule. `next` (absolute, or relative to
/// `base_url`) is followed only on the provider's own origin — scheme, host and port —
/// else [`CallError::OffOrigin`]. The walk asks before it follows a link (through the
/// engine's `Upstream::follow`), and every next-page request is checked again here.
pub fn next_page_url(base_url: &str, next: &str) -> Result<Url, CallError> {
    next_page(&build::base_url(base_url)?, next, &Redactor::default())
}

impl Target {
    /// [`next_page_url`] against the target's base URL, parsed once when compiled.
    pub fn next_page_url(&self, next: &str) -> Result<Url, CallError> {
        next_page(&self.template.base()?, next, &Redactor::default())
    }
}

fn next_page(base: &Url, next: &str, redactor: &Redactor) -> Result<Url, CallError> {
    next_page_on_origin(base, next).map_err(|refused| match refused {
        LinkRefusal::Invalid(e) => {
            CallError::InvalidArguments(format!("the next-page URL is invalid: {e}"))
        }
        LinkRefusal::OffOrigin(url) => CallError::OffOrigin {
            url_origin: redactor.clean(&url.origin().ascii_serialization()),
            base_origin: base.origin().ascii_serialization(),
        },
    })
}

/// GET, HEAD, OPTIONS, TRACE, PUT and DELETE may be repeated without changing more.
fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// Where a followable redirect (301, 302, 303, 307, 308 with a usable `Location`) goes.
fn redirect_target(current: &Url, status: StatusCode, headers: &HeaderMap) -> Option<Url> {
    if !matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = headers.get(LOCATION)?.to_str().ok()?;
    current.join(location).ok()
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// A transport failure as a [`CallError`]; the URL (which may carry a query
/// credential) is never part of the message.
fn transport_error(err: reqwest::Error, idempotent: bool, redactor: &Redactor) -> CallError {
    if let Some(blocked) = ssrf::blocked_cause(&err) {
        return CallError::Blocked(redactor.clean(blocked));
    }
    let connect = err.is_connect();
    if err.is_timeout() {
        return CallError::Timeout {
            retryable: idempotent || connect,
        };
    }
    let mut parts = Vec::new();
    let err = err.without_url();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p: &String| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    CallError::Connect {
        message: redactor.clean(&parts.join(": ")),
        // A failed connect sent nothing; anything later may have reached the API.
        retryable: idempotent || connect,
    }
}
