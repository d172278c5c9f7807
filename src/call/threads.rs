//! Threads without a write per call. A thread is (org, agent, caller, thread key)
//! ([`crate::store::threads`]); its row is read in the agent's one statement
//! ([`crate::store::agent_load`]), so a call or a step that finds its thread used
//! recently issues no statement for it at all, and the calls of one thread no longer all
//! update one row (a hot row under concurrency).
//!
//! `last_used_at` only feeds retention's idle pruning, so it is written again (with the
//! creating upsert, [`crate::store::threads::get_or_create`]) only once the row read shows
//! it older than [`touch_interval`] — at most a tenth of the configured idle time, and at
//! most a minute — by Postgres' clock, so every replica agrees on when that is.
//!
//! A thread is remembered per replica ([`crate::call::agent_memory`]) only while the statement
//! (or the touch just written) says it is fresh, and only at the org's config epoch it
//! was read at: a thread deleted through the API (the agent's or org's deletion cascade)
//! bumps the epoch, so the next call on any replica reads the row again and, not finding
//! it, creates a fresh one. Retention deletes a thread only once it was idle for its whole
//! idle time, ten times the interval: no replica holds such a thread as fresh, and within
//! one call the thread it uses was used less than `touch_interval` ago (or was just
//! touched), so retention cannot prune it before the call has recorded its outcome.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::Caller;
use crate::call::agent_memory;
use crate::call::{AgentView, Runtime, RuntimeError, ThreadKey};
use crate::results::stored_results::{self, Marks};
use crate::store::agent_load::{SeenThread, ThreadLookup};
use crate::store::threads;

/// The longest a used thread goes without its `last_used_at` written again.
pub const MAX_TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// How old `last_used_at` may grow before a call writes it again: a tenth of retention's
/// idle time `idle`, and never above [`MAX_TOUCH_INTERVAL`].
pub fn touch_interval(idle: Duration) -> Duration {
    MAX_TOUCH_INTERVAL.min(idle / 10)
}

/// An agent and the caller's thread of it, resolved for one request.
pub struct InThread {
    pub agent: Arc<AgentView>,
    pub thread: ThreadKey,
    /// The thread's G5 marks when they were read on the way (with the org's config
    /// epoch, in one round trip): the call uses them instead of reading them again.
    pub marks: Option<Marks>,
    /// The org's config epoch the agent and thread were remembered at, when it was not
    /// read for this call ([`Runtime::agent_in_thread_unchecked`]): the call confirms it
    /// before anything but a hit from memory (`call::memory_hit`).
    pub unchecked: Option<agent_memory::Epoch>,
    /// The thread as the caller named it.
    pub thread_key: String,
}

impl Runtime {
    /// The agent for this caller ([`Runtime::agent`]) and its thread `thread_key`, created
    /// on first use: one statement when the thread exists and was used recently, none when
    /// this replica remembers both at the org's current config epoch
    /// ([`crate::call::agent_memory`]).
    pub async fn agent_in_thread(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<InThread, RuntimeError> {
        crate::call::may_use(caller, agent_id)?;
        let org = caller.org();
        let owner = caller.thread_owner();
        // a tool call's connections (D4) come with the agent: no query of their own
        let user = caller.connection_user();
        let memory = &self.agent_memory;
        // the org's config epoch, read before any statement; `None`: unknown (not kept)
        let mut epoch = None;
        let mut marks = None;
        if memory.on() {
            let remembered = memory.thread(org, agent_id, &owner, thread_key);
            if let Some(thread_id) = remembered {
                let thread = ThreadKey {
                    org: org.clone(),
                    thread_id,
                };
                let key = agent_memory::epoch_key(org);
                if let Ok((seen, m)) =
                    stored_results::thread_marks_with(self.kv(), &thread, &key).await
                {
                    let fresh = seen.as_ref().and_then(Option::as_ref).and_then(|e| {
                        let same = memory.thread_at(
                            org,
                            agent_id,
                            &owner,
                            thread_key,
                            &thread.thread_id,
                            e,
                        );
                        memory
                            .agent(org, agent_id, Some(user.as_str()), e)
                            .filter(|_| same)
                    });
                    if let Some(agent) = fresh {
                        crate::telemetry::metrics::Metrics::inc(&self.metrics().agent_memory_hits);
                        return Ok(InThread {
                            agent,
                            thread,
                            marks: Some(m),
                            unchecked: None,
                            thread_key: thread_key.to_owned(),
                        });
                    }
                    epoch = agent_memory::settle(self.kv(), org, seen)
                        .await
                        .ok()
                        .flatten();
                    marks = Some((thread.thread_id, m));
                }
            } else {
                epoch = agent_memory::read_epoch(self.kv(), org)
                    .await
                    .ok()
                    .flatten();
            }
        }
        let lookup = ThreadLookup {
            caller: &owner,
            key: thread_key,
            fresh_within: self.thread_touch,
        };
        // what the statement says is counted from here (agent_memory: never past it)
        let read_at = std::time::Instant::now();
        let (agent, seen) = self
            .load_agent(caller, agent_id, Some(lookup), Some(&user))
            .await?;
        if thread_key.is_empty() || thread_key.len() > 200 {
            return Err(RuntimeError::UnknownTool(
                "thread_id must be 1 to 200 characters".into(),
            ));
        }
        let (thread_id, fresh_for) = match seen {
            Some(SeenThread {
                id,
                fresh: true,
                fresh_for,
            }) => (id, fresh_for),
            // new, or not used for a while: (re)created and touched in one statement
            _ => (
                threads::get_or_create(&self.pool, org, &agent.id, &owner, thread_key).await?,
                self.thread_touch,
            ),
        };
        let agent = Arc::new(agent);
        if let Some(epoch) = epoch {
            memory.keep_agent(org, epoch.clone(), &agent, read_at, Some(user.as_str()));
            let id = thread_id.clone();
            let (key, fresh) = (thread_key, fresh_for);
            memory.keep_thread(org, agent_id, &owner, key, id, epoch, fresh, read_at);
        }
        // marks read for the thread remembered are this thread's when it is the same one
        let marks = marks.filter(|(id, _)| *id == thread_id).map(|(_, m)| m);
        let thread = ThreadKey {
            org: org.clone(),
            thread_id,
        };
        Ok(InThread {
            agent,
            thread,
            marks,
            unchecked: None,
            thread_key: thread_key.to_owned(),
        })
    }

    /// [`Runtime::agent_in_thread`] without its round trip when this replica remembers
    /// both the agent and the thread at one config epoch: that epoch, and the thread's
    /// marks, are then the call's to confirm ([`InThread::unchecked`]) — in the round trip
    /// that stores its result when it is served from memory, first thing otherwise.
    pub async fn agent_in_thread_unchecked(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<InThread, RuntimeError> {
        let memory = &self.agent_memory;
        // only where one Redis holds the epoch every replica reads
        if memory.on() && !self.kv().standing_in() {
            crate::call::may_use(caller, agent_id)?;
            let org = caller.org();
            let owner = caller.thread_owner();
            let user = caller.connection_user();
            if let Some((thread_id, epoch)) =
                memory.thread_and_epoch(org, agent_id, &owner, thread_key)
            {
                // counted as a memory hit once the call is served from memory (it may
                // yet be confirmed the checked way, which counts for itself)
                if let Some(agent) = memory.agent(org, agent_id, Some(user.as_str()), &epoch) {
                    let thread = ThreadKey {
                        org: org.clone(),
                        thread_id,
                    };
                    return Ok(InThread {
                        agent,
                        thread,
                        marks: None,
                        unchecked: Some(epoch),
                        thread_key: thread_key.to_owned(),
                    });
                }
            }
        }
        self.agent_in_thread(caller, agent_id, thread_key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_touch_interval_stays_well_below_the_idle_time() {
        const DAY: u64 = 24 * 3600;
        assert_eq!(
            touch_interval(Duration::from_secs(30 * DAY)),
            MAX_TOUCH_INTERVAL
        );
        assert_eq!(touch_interval(Duration::from_secs(DAY)), MAX_TOUCH_INTERVAL);
        assert_eq!(
            touch_interval(Duration::from_secs(300)),
            Duration::from_secs(30)
        );
    }
}
