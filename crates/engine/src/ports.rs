//! The engine's only doors to the outside world: the upstream API, a progress sink and a
//! clock. The runtime implements them over reqwest, SSE and tokio; tests implement them in
//! memory, which is what keeps the engine deterministic and benchmarkable.

use serde::Serialize;

use crate::document::Page;
use serde_json::{Map, Value};
use std::future::Future;
use std::time::Duration;

/// One request the engine wants made. Reserved arguments are never in `args` (L3).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamRequest {
    /// The tool's own arguments (top-level parameters, body under `body`).
    pub args: Map<String, Value>,
    /// An absolute next-page URL announced by the API (cursor walks); when set, the
    /// upstream requests this URL instead of building one from `args`.
    pub next_url: Option<String>,
    /// Wall-clock time left for this tool call; the upstream should not wait longer.
    pub timeout: Duration,
    /// Which page of its collection this request asks for, from 1; 0 for a request
    /// started ahead of the walk (P9), whose page is not known yet. For traces only.
    pub page: u32,
    /// Which attempt at this request it is, from 1 (P3 retries count up). For traces only.
    pub attempt: u32,
}

/// A successful answer. An error status is an [`UpstreamFailure`], classified by the
/// upstream layer (the one owner of that rule).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpstreamResponse {
    pub status: u16,
    /// Header names in any case; the engine compares them case-insensitively.
    pub headers: Vec<(String, String)>,
    /// Raw body bytes as received; the engine parses them.
    pub body: Vec<u8>,
}

/// A request that produced no usable answer, as the upstream layer classified it: an
/// error status, a transport failure, a refusal. The engine only decides what to do with
/// it (retry within the budget, or end the collection with `upstream_error`).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamFailure {
    /// Worth retrying, as the upstream layer judged it (e.g. 429; 502/503 and timeouts of
    /// an idempotent request; a connection never made).
    pub transient: bool,
    pub status: Option<u16>,
    /// From `Retry-After`, when the API sent one.
    pub retry_after: Option<Duration>,
    /// What was learned from upstream, free of credentials.
    pub message: String,
    /// The tool ran and reported its own failure (an MCP `isError` result, M1): not a
    /// transport failure nor an HTTP error, so it is described as the tool's own.
    pub tool_error: bool,
}

/// P9: a walk may call again before an earlier call's future is done (at most
/// `Limits::concurrency` in flight), so an implementation spaces requests itself (rate
/// limits) and never assumes one call at a time.
pub trait Upstream {
    fn call(
        &self,
        req: UpstreamRequest,
    ) -> impl Future<Output = Result<UpstreamResponse, UpstreamFailure>> + Send;

    /// P5: the absolute URL to request for a next-page link `next` the API announced, or
    /// None when it would leave the provider's origin (the walk then stops with
    /// `off_origin`). The upstream owns the rule, and applies it again when it requests
    /// the URL.
    fn follow(&self, next: &str) -> Option<String>;

    /// Parses a response body into a page: work proportional to the body, which the
    /// runtime moves off its async workers for large bodies. Parsed in place by default.
    fn parse_page(&self, body: Vec<u8>) -> impl Future<Output = Page> + Send {
        std::future::ready(Page::parse_owned(body))
    }
}

/// S1: one live progress report; serialized as the `data` of a
/// `data-tool-loop-progress` chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub page: u32,
    pub pages_max: u32,
    pub items: usize,
    pub requests: u32,
    pub requests_max: u32,
    pub elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// M1: what the upstream tool itself last reported while its request runs (an MCP
    /// server's `notifications/progress`), relayed under the same throttle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamProgress>,
}

/// M1: one progress report of the upstream tool itself (`notifications/progress`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpstreamProgress {
    pub progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// S1, the one throttle rule: a report is due when `interval` has passed since the last
/// one (`last_ms`, on the same millisecond scale as `now_ms`). The walk applies it to
/// its own reports, and the runtime to the upstream's it relays between them.
pub fn progress_due(last_ms: u64, now_ms: u64, interval: Duration) -> bool {
    let interval = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
    now_ms.saturating_sub(last_ms) >= interval
}

pub trait ProgressSink {
    fn progress(&self, p: &Progress);
}

/// A sink that drops every report, for callers that do not stream.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn progress(&self, _: &Progress) {}
}

pub trait Clock {
    /// Milliseconds on a monotonic scale (only differences are used).
    fn now_ms(&self) -> u64;
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;
    /// M3: whether the call was cancelled meanwhile; the walk then stops as at a bound
    /// (`_stoppedBy: "cancelled"`), keeping what it fetched. The runtime's clock also ends
    /// its sleeps at the cancel. Never, by default.
    fn cancelled(&self) -> bool {
        false
    }
}

/// The one classification of an HTTP error answer, shared with the upstream layer that
/// applies it to every response: worth retrying when 429 (refused, not processed), or 408,
/// 425, 500, 502, 503, 504 for an idempotent method. The engine only decides what to do
/// with the verdict; keeping the rule here lets its tests see what production sees.
pub fn status_is_transient(status: u16, idempotent: bool) -> bool {
    status == 429 || (idempotent && matches!(status, 408 | 425 | 500 | 502 | 503 | 504))
}

/// Why a next-page link is not followed (P5).
#[derive(Debug, Clone, PartialEq)]
pub enum LinkRefusal {
    /// The link does not resolve to a URL.
    Invalid(String),
    /// The link resolves to another origin, or carries a user name or password.
    OffOrigin(url::Url),
}

/// The next-page origin rule (P5): `next` resolved against `base` (relative links are
/// fine), followed only on the same origin and never when it carries a user name or a
/// password (its origin alone would pass).
pub fn next_page_on_origin(base: &url::Url, next: &str) -> Result<url::Url, LinkRefusal> {
    let url = base
        .join(next)
        .map_err(|e| LinkRefusal::Invalid(e.to_string()))?;
    if url.origin() != base.origin() || !url.username().is_empty() || url.password().is_some() {
        return Err(LinkRefusal::OffOrigin(url));
    }
    Ok(url)
}
