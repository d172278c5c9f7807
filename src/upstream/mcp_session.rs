//! The process's open MCP sessions (M1): one per endpoint and credential, reused by every
//! call and sync, kept at most `mcp_session_idle_seconds` after their last use and at
//! most [`McpSessions::new`]'s `max` at once (the least recently used goes first). A
//! session dropped for either reason, or replaced, is ended at its server with an HTTP
//! `DELETE` carrying its `Mcp-Session-Id`, in the background; so is every session at
//! shutdown ([`McpSessions::end_all`]). A session its server no longer knows is only
//! forgotten: there is nothing left to end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};

use super::{Request, Target, UpstreamClient};

/// Sessions kept per process by default.
pub const SESSIONS_MAX: usize = 1024;
/// How long an unused session is kept by default (`mcp_session_idle_seconds`).
pub const IDLE_DEFAULT: Duration = Duration::from_secs(600);
/// How long one `DELETE` may take: ending a session is a courtesy, never a wait.
const END_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Session {
    pub id: Option<String>,
    pub protocol: String,
    /// M3: the server advertised `tasks.requests.tools.call` in its `initialize` answer.
    pub tool_tasks: bool,
}

impl Session {
    /// The headers every message of this session carries.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = Vec::with_capacity(2);
        if let Some(id) = &self.id {
            headers.push(("mcp-session-id".into(), id.clone()));
        }
        headers.push(("mcp-protocol-version".into(), self.protocol.clone()));
        headers
    }
}

struct Entry {
    session: Session,
    /// Where and with which credential to end it.
    target: Target,
    used: Instant,
}

/// A session to end at its server.
pub(super) struct Ending {
    target: Target,
    session: Session,
}

/// The process's open MCP sessions, keyed by endpoint and credential (so one user's
/// session is never used with another's credential).
pub struct McpSessions {
    map: Mutex<HashMap<[u8; 32], Entry>>,
    next_id: AtomicU64,
    idle: Duration,
    max: usize,
}

impl Default for McpSessions {
    fn default() -> Self {
        Self::new(IDLE_DEFAULT, SESSIONS_MAX)
    }
}

impl McpSessions {
    /// Sessions unused for `idle` are ended; at most `max` (at least 1) are kept.
    pub fn new(idle: Duration, max: usize) -> Self {
        McpSessions {
            map: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            idle,
            max: max.max(1),
        }
    }

    pub(super) fn key(target: &Target) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(target.base_url().as_bytes());
        h.update([0]);
        if let Some(c) = &target.credential {
            h.update(c.expose_secret().as_bytes());
        }
        h.finalize().into()
    }

    /// The live session for `key` (now used), and every session that has been idle too
    /// long, taken out to be ended.
    pub(super) fn checkout(&self, key: &[u8; 32]) -> (Option<Session>, Vec<Ending>) {
        let Ok(mut m) = self.map.lock() else {
            return (None, Vec::new());
        };
        let now = Instant::now();
        let ended = self.take_expired(&mut m, now);
        let live = m.get_mut(key).map(|e| {
            e.used = now;
            e.session.clone()
        });
        (live, ended)
    }

    /// Keeps `session` for `key`; returns the sessions to end: one it replaces, the
    /// expired ones, and the least recently used when the cache is full.
    pub(super) fn put(&self, key: [u8; 32], target: &Target, session: Session) -> Vec<Ending> {
        let Ok(mut m) = self.map.lock() else {
            return Vec::new();
        };
        let now = Instant::now();
        let mut ended = self.take_expired(&mut m, now);
        if !m.contains_key(&key) && m.len() >= self.max {
            let oldest = m.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| *k);
            if let Some(e) = oldest.and_then(|k| m.remove(&k)) {
                ended.push(e.ending());
            }
        }
        let entry = Entry {
            session: session.clone(),
            target: target.clone(),
            used: now,
        };
        if let Some(old) = m.insert(key, entry) {
            if old.session != session {
                ended.push(old.ending());
            }
        }
        ended
    }

    /// Forgets `session` for `key` (its server no longer knows it), unless another call
    /// has replaced it already.
    pub(super) fn forget(&self, key: &[u8; 32], session: &Session) {
        if let Ok(mut m) = self.map.lock() {
            if m.get(key).is_some_and(|e| e.session == *session) {
                m.remove(key);
            }
        }
    }

    /// Marks `session` for `key` as used now (M3: a task followed in it keeps it open).
    pub(super) fn touch(&self, key: &[u8; 32], session: &Session) {
        if let Ok(mut m) = self.map.lock() {
            if let Some(e) = m.get_mut(key).filter(|e| e.session == *session) {
                e.used = Instant::now();
            }
        }
    }

    pub(super) fn request_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn take_expired(&self, m: &mut HashMap<[u8; 32], Entry>, now: Instant) -> Vec<Ending> {
        let expired: Vec<[u8; 32]> = m
            .iter()
            .filter(|(_, e)| now.saturating_duration_since(e.used) >= self.idle)
            .map(|(k, _)| *k)
            .collect();
        expired
            .iter()
            .filter_map(|k| m.remove(k))
            .map(Entry::ending)
            .collect()
    }

    /// Shutdown: ends every open session at its server, together, within `within`.
    pub async fn end_all(&self, caller: &UpstreamClient, within: Duration) {
        let all: Vec<Ending> = match self.map.lock() {
            Ok(mut m) => m.drain().map(|(_, e)| e.ending()).collect(),
            Err(_) => return,
        };
        let ends = all.iter().map(|e| e.end(caller));
        let _ = tokio::time::timeout(within, futures_util::future::join_all(ends)).await;
    }
}

impl Entry {
    fn ending(self) -> Ending {
        Ending {
            target: self.target,
            session: self.session,
        }
    }
}

impl Ending {
    /// `DELETE` with the session's id; whatever the server answers (405 included: it
    /// may not let clients end sessions) is fine.
    async fn end(&self, caller: &UpstreamClient) {
        if self.session.id.is_none() {
            return;
        }
        let headers = self.session.headers();
        let sent = caller
            .send(
                &self.target,
                Request::End { headers: &headers },
                None,
                END_TIMEOUT,
            )
            .await;
        if let Err(e) = sent {
            tracing::debug!(error = %e, "an MCP session could not be ended");
        }
    }
}

/// Ends `sessions` in the background, so no call waits for another's courtesy.
pub(super) fn end_later(caller: &UpstreamClient, sessions: Vec<Ending>) {
    let sessions: Vec<Ending> = sessions
        .into_iter()
        .filter(|e| e.session.id.is_some())
        .collect();
    if sessions.is_empty() {
        return;
    }
    let caller = caller.clone();
    tokio::spawn(async move {
        for e in &sessions {
            e.end(&caller).await;
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::store::providers::{AuthType, ProviderAuth};
    use serde_json::json;

    fn target(url: &str) -> Target {
        let auth = ProviderAuth {
            kind: AuthType::None,
            name: None,
        };
        Target::new(url, "POST", "/", &json!({}), auth, None)
    }

    fn session(id: &str) -> Session {
        Session {
            id: Some(id.into()),
            protocol: "2025-06-18".into(),
            tool_tasks: false,
        }
    }

    #[test]
    fn m1_sessions_are_bounded_least_recently_used_first() {
        let s = McpSessions::new(Duration::from_secs(600), 2);
        let (a, b, c) = (
            target("http://a.test/mcp"),
            target("http://b.test/mcp"),
            target("http://c.test/mcp"),
        );
        let (ka, kb, kc) = (
            McpSessions::key(&a),
            McpSessions::key(&b),
            McpSessions::key(&c),
        );
        assert!(s.put(ka, &a, session("a")).is_empty());
        assert!(s.put(kb, &b, session("b")).is_empty());
        // a is used again: b is now the least recently used
        assert_eq!(s.checkout(&ka).0, Some(session("a")));
        let ended = s.put(kc, &c, session("c"));
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].session, session("b"));
        assert_eq!(s.len(), 2);
        // a replaced session is ended; a forgotten one is not (and only if it is current)
        let ended = s.put(ka, &a, session("a2"));
        assert_eq!(ended[0].session, session("a"));
        s.forget(&ka, &session("a"));
        assert_eq!(s.checkout(&ka).0, Some(session("a2")));
        s.forget(&ka, &session("a2"));
        assert_eq!(s.checkout(&ka).0, None);
    }

    #[test]
    fn m1_idle_sessions_expire_and_are_handed_back_to_be_ended() {
        let s = McpSessions::new(Duration::ZERO, 8);
        let a = target("http://a.test/mcp");
        let ka = McpSessions::key(&a);
        s.put(ka, &a, session("a"));
        let (live, ended) = s.checkout(&ka);
        assert_eq!(live, None);
        assert_eq!(ended.len(), 1);
        assert!(s.is_empty());
    }
}
