//! Threads without a write per call. A thread is (org, agent, caller, thread key) (API.md);
//! its row is read in the agent's one statement ([`crate::store::agent_load`]), so a call
//! or a step that finds its thread used recently issues no statement for it at all, and
//! the calls of one thread no longer all update one row (a hot row under concurrency).
//!
//! `last_used_at` only feeds retention's idle pruning, so it is written again (with the
//! creating upsert, [`crate::store::threads::get_or_create`]) only once the row read shows
//! it older than [`touch_interval`] — at most a tenth of the configured idle time, and at
//! most a minute — by Postgres' clock, so every replica agrees on when that is.
//!
//! Nothing is remembered between calls: each call reads the row, so a thread deleted
//! anywhere (retention, the agent's or org's deletion cascade, an operator) is simply not
//! found by the next call on any replica, which creates a fresh one. Within one call, the
//! thread it read was used less than `touch_interval` ago (or was just touched), so
//! retention cannot prune it before the call has recorded its outcome: that needs the
//! thread idle for the whole idle time, ten times the interval.

use std::time::Duration;

use super::{AgentView, Runtime, RuntimeError, ThreadKey};
use crate::auth::Caller;
use crate::store::agent_load::{SeenThread, ThreadLookup};
use crate::store::threads;

/// The longest a used thread goes without its `last_used_at` written again.
pub const MAX_TOUCH_INTERVAL: Duration = Duration::from_secs(60);

/// How old `last_used_at` may grow before a call writes it again: a tenth of retention's
/// idle time `idle`, and never above [`MAX_TOUCH_INTERVAL`].
pub fn touch_interval(idle: Duration) -> Duration {
    MAX_TOUCH_INTERVAL.min(idle / 10)
}

impl Runtime {
    /// The agent for this caller ([`Runtime::agent`]) and its thread `thread_key`, created
    /// on first use: one statement when the thread exists and was used recently.
    pub async fn agent_in_thread(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<(AgentView, ThreadKey), RuntimeError> {
        let owner = caller.thread_owner();
        let lookup = ThreadLookup {
            caller: &owner,
            key: thread_key,
            fresh_within: self.thread_touch,
        };
        // a tool call's connections (D4) come with it: no query of their own
        let user = super::connections::connection_user(caller);
        let (agent, seen) = self
            .load_agent(caller, agent_id, Some(lookup), Some(&user))
            .await?;
        if thread_key.is_empty() || thread_key.len() > 200 {
            return Err(RuntimeError::UnknownTool(
                "thread_id must be 1 to 200 characters".into(),
            ));
        }
        let thread_id = match seen {
            Some(SeenThread { id, fresh: true }) => id,
            // new, or not used for a while: (re)created and touched in one statement
            _ => {
                threads::get_or_create(&self.pool, caller.org(), &agent.id, &owner, thread_key)
                    .await?
            }
        };
        let thread = ThreadKey {
            org: caller.org().clone(),
            thread_id,
        };
        Ok((agent, thread))
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
