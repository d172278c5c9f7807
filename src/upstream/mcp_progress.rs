//! M1: an MCP server's `notifications/progress` for one `tools/call`, read out of its SSE
//! answer while it streams in (before the result arrives). Events are split at blank
//! lines; only small events are kept whole (progress notifications are small), so a
//! large result event is skipped over rather than held twice. The message is redacted of
//! the credential before it leaves this layer.

use std::sync::Mutex;

use loopgate_engine::UpstreamProgress;
use serde_json::Value;

use super::error::Redactor;

/// Events longer than this are not progress: skipped, never buffered.
const EVENT_MAX: usize = 16 * 1024;
/// Longest progress message relayed.
const MESSAGE_MAX: usize = 500;

/// Feeds chunks of an SSE body and calls `on` for each progress notification carrying
/// `token`.
pub(super) struct ProgressWatch<'a> {
    token: &'a str,
    redactor: &'a Redactor,
    on: &'a (dyn Fn(UpstreamProgress) + Sync),
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The current event so far (`\r` dropped).
    event: Vec<u8>,
    /// The current event is too long to be progress: wait for its end.
    skipping: bool,
    /// The previous byte was a line end (an event ends at a blank line).
    after_newline: bool,
}

impl<'a> ProgressWatch<'a> {
    pub fn new(
        token: &'a str,
        redactor: &'a Redactor,
        on: &'a (dyn Fn(UpstreamProgress) + Sync),
    ) -> Self {
        ProgressWatch {
            token,
            redactor,
            on,
            state: Mutex::new(State::default()),
        }
    }

    pub fn chunk(&self, bytes: &[u8]) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        for &b in bytes {
            if b == b'\r' {
                continue;
            }
            let ends = b == b'\n' && st.after_newline;
            st.after_newline = b == b'\n';
            if ends {
                let event = std::mem::take(&mut st.event);
                if !std::mem::take(&mut st.skipping) {
                    self.event(&event);
                }
                continue;
            }
            if st.skipping {
                continue;
            }
            st.event.push(b);
            if st.event.len() > EVENT_MAX {
                st.event = Vec::new();
                st.skipping = true;
            }
        }
    }

    fn event(&self, event: &[u8]) {
        let text = String::from_utf8_lossy(event);
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(&data.join("\n")) else {
            return;
        };
        if let Some(p) = progress_of(&msg, self.token, self.redactor) {
            (self.on)(p);
        }
    }
}

/// The progress a JSON-RPC message reports for `token`, if it is such a notification.
fn progress_of(msg: &Value, token: &str, redactor: &Redactor) -> Option<UpstreamProgress> {
    if msg.get("method").and_then(Value::as_str) != Some("notifications/progress") {
        return None;
    }
    let params = msg.get("params")?;
    let ours = match params.get("progressToken")? {
        Value::String(s) => s == token,
        Value::Number(n) => n.to_string() == token,
        _ => false,
    };
    if !ours {
        return None;
    }
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .map(|m| relayed_message(m, redactor));
    Some(UpstreamProgress {
        progress: params.get("progress")?.as_f64()?,
        total: params.get("total").and_then(Value::as_f64),
        message,
    })
}

/// A progress message as it is relayed: redacted of the credential, cut to
/// [`MESSAGE_MAX`] characters (M3: a task's `statusMessage` too).
pub(super) fn relayed_message(m: &str, redactor: &Redactor) -> String {
    let m = redactor.clean(m);
    match m.char_indices().nth(MESSAGE_MAX) {
        Some((at, _)) => format!("{}…", &m[..at]),
        None => m,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn m1_progress_is_read_from_sse_chunks_as_they_come() {
        let seen = Mutex::new(Vec::new());
        let on = |p: UpstreamProgress| seen.lock().unwrap().push(p);
        let redactor = Redactor::default();
        let w = ProgressWatch::new("lg-7", &redactor, &on);
        let big = format!(
            "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"t\":\"{}\"}}}}\n\n",
            "x".repeat(40_000)
        );
        let body = format!(
            "event: message\r\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\
             \"params\":{{\"progressToken\":\"lg-7\",\"progress\":1,\"total\":3,\"message\":\"one\"}}}}\r\n\r\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\
             \"params\":{{\"progressToken\":\"other\",\"progress\":1}}}}\n\n\
             {big}\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\
             \"params\":{{\"progressToken\":\"lg-7\",\"progress\":2}}}}\n\n"
        );
        // fed in awkward pieces, split inside lines and inside the blank line
        for piece in body.as_bytes().chunks(7) {
            w.chunk(piece);
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0].progress, 1.0);
        assert_eq!(seen[0].total, Some(3.0));
        assert_eq!(seen[0].message.as_deref(), Some("one"));
        assert_eq!(seen[1].progress, 2.0);
        assert_eq!(seen[1].total, None);
    }

    #[test]
    fn m1_a_progress_message_never_carries_the_credential() {
        let seen = Mutex::new(Vec::new());
        let on = |p: UpstreamProgress| seen.lock().unwrap().push(p);
        let secret = secrecy::SecretString::from("sk-live-123456".to_string());
        let redactor = Redactor::new(Some(&secret));
        let w = ProgressWatch::new("t", &redactor, &on);
        w.chunk(
            b"data: {\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\
              \"progress\":1,\"message\":\"using sk-live-123456 now\"}}\n\n",
        );
        let seen = seen.lock().unwrap();
        let m = seen[0].message.as_deref().unwrap();
        assert!(!m.contains("sk-live-123456"), "{m}");
    }
}
