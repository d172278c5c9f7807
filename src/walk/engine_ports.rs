//! The engine's `Upstream` and `Clock`, implemented with the real HTTP caller and tokio.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use secrecy::SecretString;
use tracing::Instrument as _;

use crate::store::tools::ToolKind;
use crate::store::OrgId;
use crate::telemetry::metrics::Metrics;
use crate::upstream::mcp::task::TaskSupport;
use crate::upstream::mcp::{self, McpClient, ToolPayload};
use crate::upstream::{CallError, ProviderLimiter, Request, Target};
use crate::walk::cancel::{self, CallCancel};
use crate::walk::credential::Credential;
use crate::walk::drain::Drain;
use crate::walk::progress_relay::RelayProgress;
use crate::walk::{BoundTool, Walker};
use loopgate_engine::document::Page;
use loopgate_engine::{
    Clock, Upstream, UpstreamFailure, UpstreamProgress, UpstreamRequest, UpstreamResponse,
};

/// One tool's upstream, with its credential and its provider's shared rate limiter: an
/// HTTP API, or for a tool of kind `mcp` its MCP server (M1), through the same caller.
pub struct HttpUpstream<'a> {
    walker: &'a Walker,
    target: Target,
    limiter: Option<Arc<ProviderLimiter>>,
    provider_id: String,
    /// The tool's name on its MCP server, for a tool of kind `mcp`.
    mcp_tool: Option<String>,
    /// M3: whether that tool runs as a task, as sync kept it.
    mcp_tasks: TaskSupport,
    /// Whose CPU budget parsing this tool's responses takes (`walk::cpu_jobs`).
    org: OrgId,
    /// Where an MCP tool's own progress goes (M1), when the walk reports progress.
    relay: Option<&'a dyn RelayProgress>,
    /// M3: the call's cancel, when it can be cancelled (a request in flight is abandoned).
    cancel: Option<Arc<CallCancel>>,
}

impl<'a> HttpUpstream<'a> {
    pub fn new(walker: &'a Walker, org: &OrgId, bound: &BoundTool, credential: Credential) -> Self {
        let credential: Option<SecretString> = match credential {
            Credential::User(s) | Credential::Connection(s) => Some(s),
            Credential::Org(s) => s,
        };
        let target = Target {
            template: bound.template.clone(),
            method: bound.tool.method.clone(),
            auth: bound.provider.auth.clone(),
            credential,
            propagate_trace: bound.provider.propagate_trace_context,
        };
        let limiter = walker
            .rate_limits
            .for_provider(&bound.provider.id, bound.provider.rate_limit.as_ref());
        let mcp_tool = (bound.tool.kind == ToolKind::Mcp)
            .then(|| mcp::remote_name(&bound.tool.path).to_string());
        Self {
            walker,
            target,
            limiter,
            provider_id: bound.provider.id.clone(),
            mcp_tool,
            mcp_tasks: TaskSupport::of_schema(&bound.tool.input_schema),
            org: org.clone(),
            relay: None,
            cancel: cancel::current(),
        }
    }

    /// Relays an MCP tool's own progress to `relay` (M1).
    pub fn relaying(mut self, relay: &'a dyn RelayProgress) -> Self {
        self.relay = Some(relay);
        self
    }

    /// M1: `tools/call` on the MCP server; the payload is what the engine parses, and an
    /// `isError` result is a failure whose message is the tool's own text. M3: as a task
    /// when the tool requires or allows one; dropping this future cancels the task.
    async fn call_mcp(
        &self,
        name: &str,
        req: &UpstreamRequest,
    ) -> Result<UpstreamResponse, UpstreamFailure> {
        if req.next_url.is_some() {
            return Err(UpstreamFailure {
                transient: false,
                status: None,
                retry_after: None,
                message:
                    "an MCP tool has no next-page URL to follow: it pages through its own arguments"
                        .into(),
                tool_error: false,
            });
        }
        let client = McpClient {
            caller: &self.walker.http,
            sessions: &self.walker.mcp_sessions,
            target: &self.target,
            rate: self.limiter.as_deref(),
        };
        let typed = |ct: &str, body: Vec<u8>| UpstreamResponse {
            status: 200,
            headers: vec![("content-type".into(), ct.into())],
            body,
        };
        let page = req.page;
        let relay = self.relay;
        let on_progress = move |p: UpstreamProgress| {
            if let Some(r) = relay {
                r.upstream(page, p);
            }
        };
        let progress: Option<mcp::OnProgress<'_>> = relay.map(|_| &on_progress as _);
        match client
            .call_tool(name, &req.args, self.mcp_tasks, req.timeout, progress)
            .await
        {
            Ok(ToolPayload::Json(body)) => Ok(typed("application/json", body)),
            Ok(ToolPayload::Text(text)) => {
                Ok(typed("text/plain; charset=utf-8", text.into_bytes()))
            }
            Ok(ToolPayload::Error(text)) => Err(UpstreamFailure {
                transient: false,
                status: None,
                retry_after: None,
                message: text,
                tool_error: true,
            }),
            Err(e) => Err(e.into()),
        }
    }
}

/// The upstream layer's classification, as the engine reads it.
impl From<CallError> for UpstreamFailure {
    fn from(e: CallError) -> Self {
        UpstreamFailure {
            transient: e.transient(),
            status: e.status(),
            retry_after: e.retry_after(),
            message: e.to_string(),
            tool_error: false,
        }
    }
}

impl Upstream for HttpUpstream<'_> {
    fn follow(&self, next: &str) -> Option<String> {
        // an MCP tool pages through its own arguments, never through a URL
        if self.mcp_tool.is_some() {
            return None;
        }
        self.target.next_page_url(next).ok().map(String::from)
    }

    async fn call(&self, req: UpstreamRequest) -> Result<UpstreamResponse, UpstreamFailure> {
        tokio::select! {
            r = self.call_uncut(req) => r,
            _ = self.walker.drain.cut_signal() => {
                // the replica is shutting down: the walk ends with what it has
                Err(UpstreamFailure {
                    transient: true,
                    status: None,
                    retry_after: None,
                    message: "the request was abandoned because this replica is shutting down".into(),
                    tool_error: false,
                })
            }
            _ = cancel::signal(self.cancel.as_deref()) => {
                // M3: the call was cancelled; the engine names the stop
                Err(UpstreamFailure {
                    transient: false,
                    status: None,
                    retry_after: None,
                    message: "the request was abandoned because the call was cancelled".into(),
                    tool_error: false,
                })
            }
        }
    }

    /// A large body is parsed on the blocking pool, within the org's CPU share.
    async fn parse_page(&self, body: Vec<u8>) -> Page {
        let len = body.len();
        self.walker
            .cpu
            .run(&self.org, len, move || Page::parse_owned(body))
            .await
    }
}

impl HttpUpstream<'_> {
    /// One request (HTTP or MCP), with its metrics; [`Upstream::call`] races it with the
    /// replica's shutdown cut.
    async fn call_uncut(&self, req: UpstreamRequest) -> Result<UpstreamResponse, UpstreamFailure> {
        // O1: a client span as OpenTelemetry's HTTP conventions name it (`GET /v2/items`,
        // the tool's path template; an MCP tool's request is a `POST` to its server);
        // `url.full` and `server.*` are recorded by the caller as it sends
        let method = match &self.mcp_tool {
            Some(_) => "POST".to_string(),
            None => self.target.method.trim().to_ascii_uppercase(),
        };
        let template = match (&self.mcp_tool, &req.next_url) {
            (None, None) => self.target.template.url_template(),
            _ => None,
        };
        let name = match &template {
            Some(t) => format!("{method} {t}"),
            None => method.clone(),
        };
        let span = tracing::info_span!(
            "upstream_request",
            otel.name = %name,
            otel.kind = "client",
            http.request.method = %method,
            url.template = tracing::field::Empty,
            url.full = tracing::field::Empty,
            server.address = tracing::field::Empty,
            server.port = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
            http.request.resend_count = tracing::field::Empty,
            loopgate.provider = %self.provider_id,
            loopgate.page = i64::from(req.page),
            loopgate.attempt = i64::from(req.attempt),
            loopgate.bytes = tracing::field::Empty,
            loopgate.rate_limit_wait_ms = tracing::field::Empty,
            loopgate.error = tracing::field::Empty,
        );
        if let Some(t) = &template {
            span.record("url.template", t.as_str());
        }
        if req.attempt > 1 {
            span.record("http.request.resend_count", i64::from(req.attempt) - 1);
        }
        let res = self.call_in_span(req).instrument(span.clone()).await;
        match &res {
            Ok(r) => {
                span.record("http.response.status_code", i64::from(r.status));
                span.record("loopgate.bytes", r.body.len());
            }
            Err(f) => {
                if let Some(s) = f.status {
                    span.record("http.response.status_code", i64::from(s));
                }
                if f.tool_error {
                    span.record("error.type", "tool_error");
                }
                // the upstream layer's message, already redacted of the credential
                span.record("loopgate.error", f.message.as_str());
            }
        }
        res
    }

    async fn call_in_span(
        &self,
        req: UpstreamRequest,
    ) -> Result<UpstreamResponse, UpstreamFailure> {
        let metrics = &self.walker.metrics;
        Metrics::inc(&metrics.upstream_requests);
        let started = Instant::now();
        if let Some(name) = &self.mcp_tool {
            let res = self.call_mcp(name, &req).await;
            let status = match &res {
                Ok(r) => Some(r.status),
                Err(f) => f.status,
            };
            metrics.observe_upstream(&self.provider_id, status, started.elapsed());
            if let Err(f) = &res {
                Metrics::inc(&metrics.upstream_failures);
                if !f.tool_error {
                    let kind = f
                        .status
                        .map_or_else(|| "mcp".to_string(), |s| s.to_string());
                    tracing::Span::current().record("error.type", kind.as_str());
                }
            }
            return res;
        }
        let limiter = self.limiter.as_deref();
        let request = match &req.next_url {
            // next links go through the caller's origin check and credential rules
            Some(url) => Request::NextUrl(url),
            None => Request::Args(&req.args),
        };
        let res = self
            .walker
            .http
            .send(&self.target, request, limiter, req.timeout)
            .await;
        let status = match &res {
            Ok(r) => Some(r.status),
            Err(e) => e.status(),
        };
        metrics.observe_upstream(&self.provider_id, status, started.elapsed());
        match res {
            Ok(r) => Ok(UpstreamResponse {
                status: r.status,
                headers: r.headers,
                body: r.body,
            }),
            Err(e) => {
                Metrics::inc(&metrics.upstream_failures);
                tracing::Span::current().record("error.type", e.error_type().as_str());
                Err(e.into())
            }
        }
    }
}

/// Wall clock for walks: monotonic milliseconds and tokio sleeps. When the replica's
/// shutdown cuts running walks ([`Drain::cut`]), time jumps past every wall-clock bound
/// and sleeps end, so the engine stops the walk with `_stoppedBy: "time"`. A call
/// cancelled (M3, [`cancel`]) is `cancelled`, and its sleeps end too.
pub struct SystemClock<'a> {
    pub drain: &'a Drain,
    pub cancel: Option<Arc<CallCancel>>,
}

/// How far a cut moves the clock: beyond any configured wall-clock bound.
const CUT_JUMP_MS: u64 = 365 * 24 * 3600 * 1000;

fn origin() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

impl Clock for SystemClock<'_> {
    fn now_ms(&self) -> u64 {
        let now = origin().elapsed().as_millis() as u64;
        if self.drain.is_cut() {
            now + CUT_JUMP_MS
        } else {
            now
        }
    }
    async fn sleep(&self, d: Duration) {
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = self.drain.cut_signal() => {}
            _ = cancel::signal(self.cancel.as_deref()) => {}
        }
    }
    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.is_cancelled())
    }
}
