//! The agent kept per replica: a warm tool call (or step) whose agent,
//! bindings, tools, providers, credentials and thread did not change issues no SQL
//! statement for them, and stays exact across replicas: a change acknowledged by any
//! replica's API is what the next call on every replica uses.
//!
//! # The org's config epoch
//! A value per org in the `Kv` (`lg:{org}:cfg`; Redis when configured, so all replicas
//! read the same one): a random token, written anew by each bump, so a value never comes
//! back — not even after the key expired ([`EPOCH_TTL`], refreshed by every bump; a
//! replica that finds no value sets one, the first writer's winning). A counter (`INCR`)
//! would restart at 1 after expiring, and every Redis key here carries a TTL. One owner
//! bumps it: [`bump`]. The API bumps it after every request that is not a GET/HEAD/OPTIONS
//! (whatever its status: a write may precede a failure), on every route except those that
//! write nothing the agent statement reads (tool calls, steps, MCP, workflow runs, runtime
//! tokens), for the org the request acted on, **before** its response goes out
//! (`api::config_epoch`). The writers of what the agent statement
//! ([`crate::store::agent_load`]) reads, by table (found by their SQL in `store`):
//! - agents, agent_tools (`store::agents`), tools (`store::tools`: CRUD, OpenAPI import,
//!   MCP sync), providers (`store::providers`: CRUD with the credential, a connected
//!   app's settings, MCP sync), deployments and orgs (admin routes, the org of the path;
//!   their deletion cascades to threads): only behind API requests — the middleware;
//! - connections: deleted through the API (the middleware); saved by the connect page
//!   (`POST /connect/{link}`) and its OAuth callback (`call::connect_page`), refreshed or
//!   marked broken by a tool call (`call::app_connections`) — those call [`bump`]
//!   themselves (no bearer token names their org);
//! - threads: created and touched by calls (a new thread is in no replica's memory;
//!   a touch changes no id), deleted by the cascades above and by retention, without a
//!   bump: see "Threads" below.
//!
//! A bump is sent to Redis even right after a failure (`Kv::set_shared` does not wait
//! out the `Kv`'s pause after one: a single slow command would otherwise leave every
//! write on this replica unannounced for two seconds). A bump Redis does not take is
//! logged (`could not bump the org's config epoch`) and the request still answers:
//! replicas may then use what they remember for up to the max age below, the bound on
//! any staleness.
//!
//! # What a replica remembers
//! [`AgentMemory`] keeps, per (org, agent), the [`AgentView`] (compiled tools as
//! [`crate::call::compiled_tools`] built them, sealed org credentials) with the epoch read **before**
//! its statement ran — so a bump while it loaded leaves it stale at once — and the time
//! its statement was sent; and per (org, agent, caller, thread key) the thread's id, the
//! epoch read before it was read, and until when it is fresh (the statement's age of
//! `last_used_at` by Postgres' clock, or the touch just written, minus [`MARGIN`],
//! counted from before the statement was sent — so a call slow between its statement and
//! keeping what it read never stretches it). A
//! call uses them only while the epoch it reads is the same and the agent entry is
//! younger than `agent_memory_seconds` (the max age: the safety net for writes made
//! outside the API, an operator's SQL; 0 turns memory off). Redis not answering means the
//! statement path. The epoch is read in the same round trip (`MGET`) as the thread's G5
//! marks, which the call then uses instead of reading them again — or, for a tool call
//! this replica can serve from its memory of the dataset cache, in the round trip that
//! stores its result, where a changed epoch takes back what was written and the call runs
//! again the checked way (`call::memory_hit`): either way no answer uses an epoch older
//! than the call.
//!
//! Without Redis the epoch is this process's own: memory is then on only for a single
//! replica (`replicas` = 1), since nothing would tell another process of a change.
//!
//! An agent with connected-app bindings (D4) is kept per connection user: its statement
//! read that user's own connection rows (sealed), which are no one else's. Every write of
//! a connection bumps the epoch (above), so a kept connection is as exact as the rest; a
//! warm `steps` or call of such an agent then reads no per-binding row at all. Loaded
//! without connections ([`crate::call::Runtime::agent`]), such an agent is not kept.
//! Memory is bounded by bindings as well ([`MAX_BINDINGS`]): each user's copy of a large
//! agent holds a few hundred bytes per binding (the tools themselves are shared).
//!
//! # Threads
//! The touch rule of [`crate::call::threads`] holds as documented: memory never claims a thread
//! fresh beyond `last_used_at` + the touch interval, so `last_used_at` is written again
//! by the first call after that, as before. A thread deleted through the API (the agent's
//! or org's deletion cascade) bumps the epoch. Retention deletes a thread only once it was
//! idle ten times the touch interval, so it cannot delete one that memory holds as fresh.
//!
//! Entries are bounded ([`MAX_AGENTS`], [`MAX_THREADS`]): when full, the expired ones go,
//! and if none did, all of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::call::AgentView;
use crate::kv::{Kv, KvError};
use crate::store::tools::ToolKind;
use crate::store::OrgId;

/// Agents kept per replica before the expired ones (else all) are dropped.
pub const MAX_AGENTS: usize = 10_000;
/// Bindings held by the agents kept, likewise (a bound on memory: an agent with 3,000
/// app bindings kept for many users).
pub const MAX_BINDINGS: usize = 1_000_000;
/// Threads kept per replica, likewise.
pub const MAX_THREADS: usize = 100_000;
/// Taken off a thread's freshness: the statement's answer reaches us a little after
/// Postgres measured the age.
pub const MARGIN: Duration = Duration::from_secs(1);

/// The org's config epoch as read (a random token).
pub type Epoch = String;

/// How long the epoch lives after its last bump: longer than any memory entry
/// (`agent_memory_seconds` is at most 300), so an entry never outlives the value it was
/// loaded at; a replica that then finds none sets a new one.
pub const EPOCH_TTL: Duration = Duration::from_secs(3600);

/// The `Kv` key of the org's config epoch.
pub fn epoch_key(org: &OrgId) -> String {
    format!("lg:{org}:cfg")
}

/// Bumps the org's config epoch: every replica's memory of the org's agents and threads is
/// stale from now on. A failure is logged, never returned (see the module header).
pub async fn bump(kv: &Kv, org: &OrgId) {
    let value = crate::crypto::random_token(16);
    match kv.set_shared(&epoch_key(org), &value, EPOCH_TTL).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(%org, "could not bump the org's config epoch (Redis did not answer): replicas may use what they remember of its agents for up to agent_memory_seconds")
        }
        Err(e) => tracing::warn!(%org, error = %e, "could not bump the org's config epoch"),
    }
}

/// The org's config epoch as every replica sees it; `None` when unknown (Redis did not
/// answer).
pub async fn read_epoch(kv: &Kv, org: &OrgId) -> Result<Option<Epoch>, KvError> {
    let seen = kv.get_shared_and_many(&epoch_key(org), &[]).await?.0;
    settle(kv, org, seen).await
}

/// The epoch from what a read of its key saw ([`Kv::get_shared_and_many`]): its value; a
/// new one when it had none (or the one another replica set first); `None` when unknown.
pub async fn settle(
    kv: &Kv,
    org: &OrgId,
    seen: Option<Option<String>>,
) -> Result<Option<Epoch>, KvError> {
    match seen {
        None => Ok(None),
        Some(Some(epoch)) => Ok(Some(epoch)),
        Some(None) => {
            let fresh = crate::crypto::random_token(16);
            kv.init_shared(&epoch_key(org), &fresh, EPOCH_TTL).await
        }
    }
}

/// How long memory entries are used (`agent_memory_seconds`): zero (off) when replicas
/// share no Redis to read one epoch from.
pub fn max_age(settings: &crate::config::settings::Settings) -> Duration {
    match settings.redis_url.is_none() && settings.replicas > 1 {
        true => Duration::ZERO,
        false => Duration::from_secs(settings.agent_memory_seconds),
    }
}

/// (org, agent, connection user): the user is empty for agents without app bindings.
type AgentRef = (String, String, String);

#[derive(Hash, PartialEq, Eq)]
struct ThreadRef {
    org: String,
    agent: String,
    caller: String,
    key: String,
}

impl ThreadRef {
    fn new(org: &OrgId, agent: &str, caller: &str, key: &str) -> Self {
        ThreadRef {
            org: org.as_str().to_owned(),
            agent: agent.to_owned(),
            caller: caller.to_owned(),
            key: key.to_owned(),
        }
    }
}

struct Agent {
    epoch: Epoch,
    loaded: Instant,
    view: Arc<AgentView>,
}

struct Thread {
    epoch: Epoch,
    fresh_until: Instant,
    id: String,
}

#[derive(Default)]
struct Entries {
    agents: HashMap<AgentRef, Agent>,
    /// Bindings of the agents kept.
    bindings: usize,
    threads: HashMap<ThreadRef, Thread>,
}

/// This replica's agents and threads (see the module header).
pub struct AgentMemory {
    max_age: Duration,
    entries: Mutex<Entries>,
}

impl AgentMemory {
    /// Entries used for at most `max_age` after their load; `Duration::ZERO`: off.
    pub fn new(max_age: Duration) -> Self {
        AgentMemory {
            max_age,
            entries: Mutex::default(),
        }
    }

    pub fn on(&self) -> bool {
        !self.max_age.is_zero()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The agent as loaded at `epoch`, if it is kept and younger than the max age: the
    /// one of every caller, else (an agent with app bindings) the one kept for connection
    /// user `user`.
    pub fn agent(
        &self,
        org: &OrgId,
        agent: &str,
        user: Option<&str>,
        epoch: &Epoch,
    ) -> Option<Arc<AgentView>> {
        let entries = self.entries();
        let key = |u: &str| (org.as_str().to_owned(), agent.to_owned(), u.to_owned());
        let young = |a: &Agent| a.epoch == *epoch && a.loaded.elapsed() < self.max_age;
        if let Some(a) = entries.agents.get(&key("")).filter(|a| young(a)) {
            return Some(a.view.clone());
        }
        let a = entries.agents.get(&key(user.filter(|u| !u.is_empty())?))?;
        young(a).then(|| a.view.clone())
    }

    /// The id of the thread, while it is kept and fresh (whatever the epoch: the caller
    /// reads the epoch with the thread's marks, then asks [`AgentMemory::thread_at`]).
    pub fn thread(&self, org: &OrgId, agent: &str, caller: &str, key: &str) -> Option<String> {
        let entries = self.entries();
        let t = entries
            .threads
            .get(&ThreadRef::new(org, agent, caller, key))?;
        (t.fresh_until > Instant::now()).then(|| t.id.clone())
    }

    /// The id of the thread and the epoch it was read at, while it is kept and fresh.
    pub fn thread_and_epoch(
        &self,
        org: &OrgId,
        agent: &str,
        caller: &str,
        key: &str,
    ) -> Option<(String, Epoch)> {
        let entries = self.entries();
        let t = entries
            .threads
            .get(&ThreadRef::new(org, agent, caller, key))?;
        (t.fresh_until > Instant::now()).then(|| (t.id.clone(), t.epoch.clone()))
    }

    /// Whether the thread `id` is kept, fresh, and was read at `epoch`.
    pub fn thread_at(
        &self,
        org: &OrgId,
        agent: &str,
        caller: &str,
        key: &str,
        id: &str,
        epoch: &Epoch,
    ) -> bool {
        let entries = self.entries();
        entries
            .threads
            .get(&ThreadRef::new(org, agent, caller, key))
            .is_some_and(|t| t.id == id && t.epoch == *epoch && t.fresh_until > Instant::now())
    }

    /// Keeps `view`, loaded by a statement that ran after `epoch` was read and after
    /// `read_at` (its age counts from then, not from when the call got round to keeping
    /// it). An agent with connected-app bindings is kept only with the connections of
    /// `user` read in that statement, and for that user alone.
    pub fn keep_agent(
        &self,
        org: &OrgId,
        epoch: Epoch,
        view: &Arc<AgentView>,
        read_at: Instant,
        user: Option<&str>,
    ) {
        if !self.on() {
            return;
        }
        let user = match view.tools.iter().any(|t| t.tool.kind == ToolKind::App) {
            false => "",
            true => match user {
                Some(u) if !u.is_empty() => u,
                _ => return,
            },
        };
        let now = Instant::now();
        let mut entries = self.entries();
        let size = view.tools.len();
        if entries.agents.len() >= MAX_AGENTS || entries.bindings + size > MAX_BINDINGS {
            let max_age = self.max_age;
            entries
                .agents
                .retain(|_, a| now.duration_since(a.loaded) < max_age);
            entries.bindings = entries.agents.values().map(|a| a.view.tools.len()).sum();
            if entries.agents.len() >= MAX_AGENTS || entries.bindings + size > MAX_BINDINGS {
                entries.agents.clear();
                entries.bindings = 0;
            }
        }
        let key = (org.as_str().to_owned(), view.id.clone(), user.to_owned());
        let agent = Agent {
            epoch,
            loaded: read_at,
            view: view.clone(),
        };
        entries.bindings += size;
        if let Some(old) = entries.agents.insert(key, agent) {
            entries.bindings -= old.view.tools.len();
        }
    }

    /// Keeps thread `id`, read (or touched) by a statement that ran after `epoch` was read
    /// and after `read_at`, and fresh for `fresh_for` from that statement on (less
    /// [`MARGIN`]): counted from `read_at`, so however long the call took between the
    /// statement and this, memory never claims the thread fresh past what Postgres said.
    #[allow(clippy::too_many_arguments)]
    pub fn keep_thread(
        &self,
        org: &OrgId,
        agent: &str,
        caller: &str,
        key: &str,
        id: String,
        epoch: Epoch,
        fresh_for: Duration,
        read_at: Instant,
    ) {
        let Some(fresh) = fresh_for.checked_sub(MARGIN).filter(|d| !d.is_zero()) else {
            return;
        };
        if !self.on() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries();
        if entries.threads.len() >= MAX_THREADS {
            entries.threads.retain(|_, t| t.fresh_until > now);
            if entries.threads.len() >= MAX_THREADS {
                entries.threads.clear();
            }
        }
        entries.threads.insert(
            ThreadRef::new(org, agent, caller, key),
            Thread {
                epoch,
                fresh_until: read_at + fresh,
                id,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: &str) -> Arc<AgentView> {
        Arc::new(AgentView {
            id: id.into(),
            cache_mode: crate::store::deployments::CacheMode::Off,
            instructions: String::new(),
            tools: Vec::new(),
            budget: 15,
            token_budget: None,
        })
    }

    #[test]
    fn an_agent_is_used_only_at_the_epoch_it_was_loaded_at_and_while_young() {
        let org = OrgId::trusted("org_a");
        let memory = AgentMemory::new(Duration::from_secs(60));
        let at = |e: &str| e.to_string();
        memory.keep_agent(&org, at("3"), &view("agt_1"), Instant::now(), None);
        assert!(memory.agent(&org, "agt_1", None, &at("3")).is_some());
        assert!(memory.agent(&org, "agt_1", None, &at("4")).is_none());
        assert!(memory.agent(&org, "agt_1", None, &String::new()).is_none());
        assert!(memory
            .agent(&OrgId::trusted("org_b"), "agt_1", None, &at("3"))
            .is_none());
        let old = AgentMemory::new(Duration::from_nanos(1));
        old.keep_agent(&org, at("3"), &view("agt_1"), Instant::now(), None);
        std::thread::sleep(Duration::from_millis(2));
        assert!(old.agent(&org, "agt_1", None, &at("3")).is_none());
        let off = AgentMemory::new(Duration::ZERO);
        off.keep_agent(&org, at("3"), &view("agt_1"), Instant::now(), None);
        assert!(off.agent(&org, "agt_1", None, &at("3")).is_none());
    }

    /// Keeps thread `thr_1` of (org_a, agt, u1, th) at `epoch`.
    fn keep_thread_1(memory: &AgentMemory, epoch: &Epoch, fresh: Duration, read_at: Instant) {
        let (org, id) = (OrgId::trusted("org_a"), "thr_1".to_string());
        memory.keep_thread(&org, "agt", "u1", "th", id, epoch.clone(), fresh, read_at);
    }

    /// Memory never claims a thread fresh beyond what the statement said (less the margin):
    /// the touch rule and retention's argument rest on it.
    #[test]
    fn a_thread_is_fresh_no_longer_than_the_statement_said() {
        let org = OrgId::trusted("org_a");
        let memory = AgentMemory::new(Duration::from_secs(60));
        let e = "1".to_string();
        let now = Instant::now();
        keep_thread_1(&memory, &e, MARGIN, now);
        assert_eq!(memory.thread(&org, "agt", "u1", "th"), None, "no time left");
        // fresh for a minute more: long enough that no stall of a loaded machine between
        // keeping and asking decides the outcome
        keep_thread_1(&memory, &e, MARGIN + Duration::from_secs(60), now);
        assert_eq!(
            memory.thread(&org, "agt", "u1", "th").as_deref(),
            Some("thr_1")
        );
        assert!(memory.thread_at(&org, "agt", "u1", "th", "thr_1", &e));
        assert!(!memory.thread_at(&org, "agt", "u1", "th", "thr_1", &"2".into()));
        assert_eq!(memory.thread(&org, "agt", "u2", "th"), None);
        // past its time: read 10 s ago and fresh for 5 s then (no sleeping on the clock)
        let Some(past) = now.checked_sub(Duration::from_secs(10)) else {
            return;
        };
        keep_thread_1(&memory, &e, MARGIN + Duration::from_secs(5), past);
        assert_eq!(
            memory.thread(&org, "agt", "u1", "th"),
            None,
            "past its time"
        );
        assert!(!memory.thread_at(&org, "agt", "u1", "th", "thr_1", &e));
    }

    /// What a statement said is counted from before it was sent, not from when the call
    /// kept it: a call slow in between (compiling, a pool wait) must not stretch a
    /// thread's freshness past `last_used_at` + the touch interval, nor an agent's age.
    #[test]
    fn freshness_and_age_count_from_the_statement_not_from_keeping() {
        let org = OrgId::trusted("org_a");
        let memory = AgentMemory::new(Duration::from_secs(2));
        let e = "1".to_string();
        let Some(read_at) = Instant::now().checked_sub(Duration::from_secs(3)) else {
            return;
        };
        // the statement said 3.5 s left (less the 1 s margin): 3 s of it are gone already
        keep_thread_1(&memory, &e, MARGIN + Duration::from_millis(2500), read_at);
        assert_eq!(memory.thread(&org, "agt", "u1", "th"), None);
        // loaded 3 s ago, older than the 2 s max age
        memory.keep_agent(&org, e.clone(), &view("agt_1"), read_at, None);
        assert!(memory.agent(&org, "agt_1", None, &e).is_none());
    }

    #[test]
    fn memory_is_off_for_several_replicas_without_redis() {
        let mut s = crate::config::settings::Settings::load().unwrap();
        s.agent_memory_seconds = 5;
        s.redis_url = None;
        s.replicas = 1;
        assert_eq!(max_age(&s), Duration::from_secs(5));
        s.replicas = 3;
        assert_eq!(max_age(&s), Duration::ZERO);
        s.redis_url = Some("redis://127.0.0.1:1".to_string().into());
        assert_eq!(max_age(&s), Duration::from_secs(5));
    }

    #[test]
    fn memory_is_bounded() {
        let org = OrgId::trusted("org_a");
        let memory = AgentMemory::new(Duration::from_secs(60));
        for i in 0..MAX_AGENTS + 5 {
            memory.keep_agent(
                &org,
                "1".into(),
                &view(&format!("agt_{i}")),
                Instant::now(),
                None,
            );
        }
        assert!(memory.entries().agents.len() <= MAX_AGENTS);
        assert!(memory
            .agent(&org, &format!("agt_{}", MAX_AGENTS + 4), None, &"1".into())
            .is_some());
    }
}
