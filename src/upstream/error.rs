//! [`CallError`]: every way one upstream call can fail, classified for the engine
//! (transient or not, status, `Retry-After`), and the [`Redactor`] that keeps the
//! credential out of every message built from what the upstream or the network said.

use std::time::Duration;

use base64::Engine as _;
use secrecy::{ExposeSecret, SecretString};

/// Longest `body_excerpt` kept from an error response, in characters.
pub const EXCERPT_CHARS: usize = 2_000;

/// One failed upstream call. Messages are written for a model (and an operator) to
/// read; none contains the credential (see [`Redactor`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The arguments cannot make a request: a missing path parameter, an unknown
    /// argument, a value that cannot be serialized where it goes.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool or provider configuration cannot make a request (a bad `base_url`,
    /// a `header`/`query` auth without a name), or the HTTP client could not be built.
    #[error("misconfigured upstream: {0}")]
    Misconfigured(String),
    /// Refused by the server-side request forgery guard.
    #[error("blocked: {0}")]
    Blocked(String),
    /// A next-page URL outside the provider's origin.
    #[error("the URL {url_origin} is not on the provider's origin {base_origin}")]
    OffOrigin {
        url_origin: String,
        base_origin: String,
    },
    /// The response body is larger than the byte budget.
    #[error("the response is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// An MCP server answered with a JSON-RPC error, or with something that is not the
    /// protocol (no answer to the request, a body that is not JSON-RPC).
    #[error("the MCP server {0}")]
    Protocol(String),
    #[error("more than {limit} redirects")]
    TooManyRedirects { limit: usize },
    /// No complete response in time (waiting for a rate-limit permit included).
    /// `retryable`: the method is idempotent, or nothing was sent yet.
    #[error("the upstream did not answer in time")]
    Timeout { retryable: bool },
    /// Name resolution, connection, TLS or transfer failure. `retryable`: the
    /// connection was never made, or the method is idempotent.
    #[error("could not reach the upstream: {message}")]
    Connect { message: String, retryable: bool },
    /// A non-2xx answer (a 3xx that is not a followable redirect included).
    #[error("the upstream answered {status}: {body_excerpt}")]
    Status {
        status: u16,
        retry_after: Option<Duration>,
        /// The start of the response body, lossy UTF-8, credential redacted.
        body_excerpt: String,
        /// 429 always; 408/425/500/502/503/504 for idempotent methods.
        retryable: bool,
    },
}

impl CallError {
    /// O1: the span's `error.type`, of low cardinality: the status code of an error
    /// answer, else what went wrong in a word (`timeout`, `connect`, …).
    pub fn error_type(&self) -> String {
        match self {
            CallError::Status { status, .. } => status.to_string(),
            CallError::InvalidArguments(_) => "invalid_arguments".into(),
            CallError::Misconfigured(_) => "misconfigured".into(),
            CallError::Blocked(_) => "blocked".into(),
            CallError::OffOrigin { .. } => "off_origin".into(),
            CallError::TooLarge { .. } => "too_large".into(),
            CallError::Protocol(_) => "protocol".into(),
            CallError::TooManyRedirects { .. } => "too_many_redirects".into(),
            CallError::Timeout { .. } => "timeout".into(),
            CallError::Connect { .. } => "connect".into(),
        }
    }

    /// Worth retrying (after [`retry_after`](Self::retry_after) when given): 429 always
    /// (the request was refused, not processed); 408, 425, 500, 502, 503, 504, timeouts
    /// and transfer errors only for idempotent methods (GET, HEAD, OPTIONS, PUT,
    /// DELETE); failures to connect for every method (nothing was sent).
    pub fn transient(&self) -> bool {
        match self {
            CallError::Timeout { retryable }
            | CallError::Connect { retryable, .. }
            | CallError::Status { retryable, .. } => *retryable,
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            CallError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl CallError {
    /// The one classification of an HTTP error answer (the engine only decides what to do
    /// with it): retryable when 429 (refused, not processed), or 408, 425, 500, 502, 503,
    /// 504 for an idempotent method; `Retry-After` (seconds or an HTTP date) kept for 429
    /// and 503, the statuses that define it.
    pub fn from_status(
        status: u16,
        retry_after: Option<&str>,
        body_excerpt: String,
        idempotent: bool,
    ) -> Self {
        let retryable = loopgate_engine::ports::status_is_transient(status, idempotent);
        let retry_after = match status {
            429 | 503 => {
                retry_after.and_then(|v| super::response::retry_after(v, chrono::Utc::now()))
            }
            _ => None,
        };
        CallError::Status {
            status,
            retry_after,
            body_excerpt,
            retryable,
        }
    }
}

/// Removes every form in which the credential could travel (raw, percent-encoded,
/// form-encoded, JSON-escaped, HTML-safe JSON-escaped, and JSON string content with any of
/// its characters `\u`-escaped: [`super::escaped`]) from a text. A credential that is a
/// whole `Authorization` value (`Basic …`, `Bearer …`) is also removed as its token alone
/// and, for `Basic`, as the decoded `user:password` and the password. A JSON text stays
/// JSON, but for one case: a credential holding `"` whose literal bytes are there across
/// a string's bare quote is removed all the same (the credential never survives); a bare
/// quote at either end of such a copy stays (`escaped::widen`).
#[derive(Default)]
pub(crate) struct Redactor {
    needles: Vec<String>,
    /// The credential's parts as text (what an escaped copy decodes to).
    parts: Vec<String>,
}

const REDACTED: &str = "[redacted]";

/// `text` with each of the ordered, disjoint `ranges` replaced by [`REDACTED`].
fn splice(text: &[u8], ranges: &[std::ops::Range<usize>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for r in ranges {
        out.extend_from_slice(&text[at..r.start]);
        out.extend_from_slice(REDACTED.as_bytes());
        at = r.end;
    }
    out.extend_from_slice(&text[at..]);
    out
}

/// Too short a secret would redact ordinary text; such a part is not redacted (and
/// not worth much).
const SHORTEST: usize = 4;

/// The credential and the parts of it an API may echo on their own.
fn parts(raw: &str) -> Vec<String> {
    let mut out = vec![raw.to_string()];
    let scheme = |name: &str| {
        raw.get(..name.len())
            .filter(|p| p.eq_ignore_ascii_case(name))
            .map(|_| raw[name.len()..].trim())
    };
    if let Some(token) = scheme("bearer ") {
        out.push(token.to_string());
    }
    if let Some(token) = scheme("basic ") {
        out.push(token.to_string());
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()
            .and_then(|d| String::from_utf8(d).ok());
        if let Some(pair) = decoded {
            if let Some((_, password)) = pair.split_once(':') {
                out.push(password.to_string());
            }
            out.push(pair);
        }
    }
    out.retain(|p| p.len() >= SHORTEST);
    out
}

impl Redactor {
    pub(crate) fn new(credential: Option<&SecretString>) -> Self {
        let mut needles: Vec<String> = Vec::new();
        let raw = credential.map(|s| s.expose_secret()).unwrap_or("");
        let parts = parts(raw);
        for part in parts.clone() {
            let pct = super::encode::encode_component(&part);
            let form: String = url::form_urlencoded::byte_serialize(part.as_bytes()).collect();
            // as it appears inside a JSON string (`/` may be escaped too)
            let quoted = serde_json::to_string(&part).unwrap_or_default();
            let json = quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or("")
                .to_string();
            let slashed = json.replace('/', "\\/");
            // HTML-safe JSON encoders (Go's by default) write `<`, `>`, `&` as `\u00XX`
            let html_safe = json
                .replace('<', "\\u003c")
                .replace('>', "\\u003e")
                .replace('&', "\\u0026");
            for variant in [part, pct, form, json, slashed, html_safe] {
                if !needles.contains(&variant) {
                    needles.push(variant);
                }
            }
        }
        // Longest first, so a longer encoded form is not half-replaced by a shorter one.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Redactor { needles, parts }
    }

    pub(crate) fn clean(&self, text: &str) -> String {
        // each range starts and ends on a character boundary
        String::from_utf8_lossy(&self.clean_bytes(text.as_bytes().to_vec())).into_owned()
    }

    /// A whole response body with every copy of the credential replaced (a successful
    /// body, its next links and headers leave the upstream layer only this way, so an API
    /// echoing the credential never puts it into a result, a stored result or the cache).
    pub(crate) fn clean_bytes(&self, body: Vec<u8>) -> Vec<u8> {
        let mut out = body;
        for needle in &self.needles {
            // a copy read from inside an escape takes the whole escape with it, and one
            // with a string's bare quote at an end leaves that quote (`escaped::widen`) —
            // where an overlapping copy may start: so overlapping copies are found too,
            // each cut on its own (a credential overlaps itself only when periodic)
            let finder = memchr::memmem::Finder::new(needle.as_bytes());
            let mut wholes: Vec<std::ops::Range<usize>> = Vec::new();
            let mut from = 0;
            while let Some(at) = out.get(from..).and_then(|rest| finder.find(rest)) {
                let hit = from + at;
                wholes.push(super::escaped::widen(&out, hit..hit + needle.len()));
                from = hit + 1;
            }
            wholes.sort_by_key(|r| r.start);
            let mut hits: Vec<std::ops::Range<usize>> = Vec::new();
            for whole in wholes {
                match hits.last_mut() {
                    Some(last) if whole.start < last.end => last.end = last.end.max(whole.end),
                    _ => hits.push(whole),
                }
            }
            if !hits.is_empty() {
                out = splice(&out, &hits);
            }
        }
        let found = super::escaped::find(&out, &self.parts);
        if found.is_empty() {
            return out;
        }
        splice(&out, &found)
    }

    /// A short, redacted excerpt of an error body. Redacted before it is cut, so a
    /// credential straddling the cut cannot leak half of itself.
    pub(crate) fn excerpt(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(body);
        let cleaned = self.clean(text.trim());
        match cleaned.char_indices().nth(EXCERPT_CHARS) {
            Some((cut, _)) => format!("{}…", &cleaned[..cut]),
            None => cleaned,
        }
    }
}
