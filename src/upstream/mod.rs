//! The upstream caller: one tool invocation to one real, safe HTTP request against a
//! provider's API. Owns request building, credential placement, the server-side request
//! forgery guard, redirects, timeouts, the response byte cap and per-provider rate limits.
//! Knows nothing of threads, stored results or the engine (the runtime adapts
//! [`RawResponse`] / [`CallError`] to the engine's `UpstreamResponse` / `UpstreamFailure`).
//!
//! # API
//! - [`UpstreamClient::new`]`(`[`UpstreamClientConfig`]`)`: one per process (it holds the connection pool).
//! - [`UpstreamClient::call`]`(&target, &args, rate)`: builds the request from the tool
//!   ([`Target`]) and the model's arguments; [`UpstreamClient::call_url`]`(&target, next, rate)`:
//!   GETs a next-page URL, which must be on the `base_url`'s origin (scheme, host, port)
//!   or it is [`CallError::OffOrigin`] (a relative one is resolved against `base_url`);
//!   the credential is applied as configured (a query credential replaces any echoed
//!   copy). [`UpstreamClient::send`] is the general form taking a [`Request`] and a timeout
//!   (capped by the configured one) — the engine's `UpstreamRequest` maps onto it.
//! - Success is a 2xx [`RawResponse`] `{status, headers, body}`. Every non-2xx is
//!   [`CallError::Status`] with a redacted body excerpt, classified by the one rule
//!   [`CallError::from_status`]; [`CallError::transient`], [`CallError::status`],
//!   [`CallError::retry_after`] give the engine its `UpstreamFailure`. No retries happen
//!   here: the engine decides on retry and backoff from that class.
//! - [`next_page_url`] is the one next-page origin rule: the walk asks it before it
//!   follows a link, and [`UpstreamClient::send`] applies it to every next-page request.
//! - [`RateLimits::for_provider`] hands out the process-wide [`ProviderLimiter`] of a
//!   provider; pass it to every call of that provider. Each HTTP request (each redirect
//!   hop included) waits for a permit, and the wait counts against the timeout.
//!
//! # Request building (see `build.rs`, `encode.rs`)
//! Each top-level property of `input_schema` goes where its `x-loopgate-in` says, under
//! its `x-loopgate-name` (else its key). Without `x-loopgate-in` (hand-defined tools): a
//! `{placeholder}` of the path → path, `body` → body, anything else → query string, for
//! every method (POST/PUT/PATCH too; a JSON body is only ever the `body` argument).
//! - Path: each value percent-encoded as one segment (all but `A-Za-z0-9-._~`, so `/`,
//!   `?`, `#`, `%` are encoded); a value making a `.` or `..` segment is refused;
//!   arrays comma-joined (`simple`). A missing or null path argument is
//!   [`CallError::InvalidArguments`] naming it.
//! - Query: scalars as their JSON text (`true`, `2.5`); arrays as repeated keys
//!   (`form`, explode, the default), comma-joined with `x-loopgate-explode: false`, space
//!   or pipe-joined for those styles, `a[]=x` for `deepObject`; objects spread as
//!   `k=v` (`form`), `a[k]=v` (`deepObject`), or as JSON text for a hand-defined
//!   property without a style or a parameter whose `x-loopgate-content-type` is JSON.
//! - Header: scalars as text, arrays comma-joined; CR/LF refused. `Host`,
//!   `Content-Length`, `Content-Type` and other framing headers are never taken from
//!   arguments; the provider's credential header always wins over an argument.
//! - Body: JSON by default; `application/x-www-form-urlencoded` form-encodes an object
//!   with brackets (`metadata[k]=v`, `expand[]=a`, `items[0][price]=p`); another
//!   non-JSON media type sends a string argument as is; multipart is refused.
//! - A fixed query in a hand-written template (`/search?type=repo`) is kept, after
//!   the `base_url`'s own query and before the arguments'.
//! - Unknown arguments: refused with the list of real ones, unless the schema has no
//!   `properties` at all (then placed by the hand-defined rule).
//!
//! # Credential
//! `bearer` → `Authorization: Bearer …`, `header` → the header `auth.name`, `query` → the
//! query parameter `auth.name`, `none` → nothing (a target without a credential sends
//! none; refusing that is the runtime's `credential_required`). It is marked sensitive,
//! never logged, absent from `Debug` ([`secrecy::SecretString`]), and every message
//! (successful and error bodies echoing it, response headers, transport errors) is
//! redacted of it, raw, URL-encoded or JSON-escaped, before it leaves this layer.
//!
//! # Server-side request forgery guard (see `ssrf.rs`)
//! Unless `allow_private`: only `http`/`https`; non-public addresses refused after
//! resolution by the client's own resolver, which returns only checked addresses (the
//! address connected to is the address checked); IP-literal hosts checked before sending;
//! no proxy. Redirects are followed here (`Policy::none` in the client): at most
//! `max_redirects` of 301/302/303/307/308, every hop re-checked; 303 (and 301/302 after
//! a POST) become a GET without body. A hop to another origin is followed **without**
//! the credential (its header or query parameter is stripped, with `Authorization`,
//! `Cookie`), and the credential is not restored if the chain comes back.
//!
//! # Limits
//! The whole call (permits, redirects, body) within `timeout`; connects within
//! `connect_timeout`; the body counted while it streams and abandoned as
//! [`CallError::TooLarge`] past `max_body_bytes` (or at once when `Content-Length`
//! says so); error bodies read only up to 64 KiB for their excerpt.

mod build;
mod caller;
mod credential;
mod encode;
mod error;
mod escaped;
pub mod mcp;
mod mcp_progress;
mod mcp_session;
pub mod oauth;
pub mod oauth_cache;
pub mod oauth_metadata;
mod rate;
mod response;
mod ssrf;

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Map, Value};

pub use build::Template;
pub use caller::{next_page_url, UpstreamClient};
pub use error::CallError;
pub use mcp_session::McpSessions;
pub use rate::{ProviderLimiter, RateLimits};
pub use ssrf::{blocked_ip, blocked_name};

use crate::store::providers::ProviderAuth;

/// One tool of one provider, with the credential chosen for this call (the runtime
/// token's own for the provider, else the org's).
#[derive(Debug, Clone)]
pub struct Target {
    /// The tool's request compiled once (base URL parsed, each argument's place decided);
    /// the runtime keeps it per tool and provider version.
    pub template: Arc<build::Template>,
    /// Upper or lower case.
    pub method: String,
    pub auth: ProviderAuth,
    pub credential: Option<SecretString>,
    /// Send the current span's W3C trace context (`traceparent`, `tracestate`) to the
    /// provider's origin (the provider's `propagate_trace_context`); never across origins.
    pub propagate_trace: bool,
}

impl Target {
    /// A target compiled here from its parts (tests, MCP sync, one-off requests).
    pub fn new(
        base_url: &str,
        method: &str,
        path: &str,
        input_schema: &Value,
        auth: ProviderAuth,
        credential: Option<SecretString>,
    ) -> Self {
        Target {
            template: Arc::new(build::Template::compile(base_url, path, input_schema)),
            method: method.to_owned(),
            auth,
            credential,
            propagate_trace: false,
        }
    }

    /// The provider's base URL as written.
    pub fn base_url(&self) -> &str {
        self.template.base_url()
    }
}

/// What to request: the tool with arguments, a next-page URL the API announced, or a
/// JSON-RPC message POSTed to the provider's endpoint (an MCP server, see [`mcp`]).
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    Args(&'a Map<String, Value>),
    NextUrl(&'a str),
    /// A JSON body POSTed to `base_url` itself, with these extra headers.
    Rpc {
        body: &'a [u8],
        headers: &'a [(String, String)],
    },
    /// [`Request::Rpc`] whose successful body is also shown to `watch` chunk by chunk as
    /// it streams in (an MCP server's progress events, before its answer ends).
    RpcWatched {
        body: &'a [u8],
        headers: &'a [(String, String)],
        watch: BodyWatch<'a>,
    },
    /// A `DELETE` of `base_url` itself with these headers (ending an MCP session).
    End {
        headers: &'a [(String, String)],
    },
}

/// Sees each chunk of a successful body as it arrives, unredacted: whatever it passes
/// on must be redacted by its owner.
#[derive(Clone, Copy)]
pub struct BodyWatch<'a>(pub &'a (dyn Fn(&[u8]) + Sync));

impl std::fmt::Debug for BodyWatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BodyWatch")
    }
}

#[derive(Debug, Clone)]
pub struct UpstreamClientConfig {
    /// Allow loopback, private, link-local… targets (tests, on-premise installs).
    pub allow_private: bool,
    /// The whole call: rate-limit waits, redirects and the body included.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// The response byte cap (the engine's byte budget).
    pub max_body_bytes: usize,
    pub max_redirects: usize,
    pub user_agent: String,
}

impl Default for UpstreamClientConfig {
    fn default() -> Self {
        UpstreamClientConfig {
            allow_private: false,
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(5),
            max_body_bytes: 24 * 1024 * 1024,
            max_redirects: 5,
            user_agent: concat!("loopgate/", env!("CARGO_PKG_VERSION")).to_string(),
        }
    }
}

/// A 2xx answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawResponse {
    pub status: u16,
    /// Names lower case, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod build_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod http_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod limits_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod redaction_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod ssrf_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod testserver;
