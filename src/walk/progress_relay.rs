//! M1, S1: the upstream tool's own progress (an MCP server's `notifications/progress`)
//! relayed into the walk's progress stream. Every report of the walk passes through
//! [`Relay`] on its way to the caller's sink, so an upstream report goes out only when
//! the engine's throttle rule ([`progress_due`]) allows it counting the walk's reports
//! too: one stream, one rate. A relayed report carries the walk's last figures with the
//! upstream's in `upstream`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use loopgate_engine::{progress_due, Progress, ProgressSink, UpstreamProgress};

/// What a running request relays upstream progress to.
pub trait RelayProgress: Sync {
    /// The upstream reported `p` during the request for `page`.
    fn upstream(&self, page: u32, p: UpstreamProgress);
}

/// Wraps the walk's sink; see the module.
pub struct Relay<'a, P> {
    inner: &'a P,
    started: Instant,
    interval: Duration,
    pages_max: u32,
    requests_max: u32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Milliseconds since `started` of the last report sent, either kind.
    last_ms: Option<u64>,
    /// The walk's last report, whose figures a relayed one repeats.
    last: Option<Progress>,
    /// The last report sent was a relayed one: the walk's next waits its turn too.
    last_relayed: bool,
}

impl<'a, P: ProgressSink + Sync> Relay<'a, P> {
    pub fn new(inner: &'a P, limits: &loopgate_engine::Limits) -> Self {
        Relay {
            inner,
            started: Instant::now(),
            interval: limits.progress_interval,
            pages_max: limits.pages_per_collection,
            requests_max: limits.requests,
            state: Mutex::new(State::default()),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl<P: ProgressSink + Sync> ProgressSink for Relay<'_, P> {
    /// The walk's own report, already throttled against the walk's others by the
    /// engine: noted, and passed on unless a relayed report went out within the interval
    /// (nothing in a report is needed for the answer; the next one carries the figures).
    fn progress(&self, p: &Progress) {
        let now = self.now_ms();
        if let Ok(mut st) = self.state.lock() {
            st.last = Some(p.clone());
            if st.last_relayed && !progress_due(st.last_ms.unwrap_or(0), now, self.interval) {
                return;
            }
            st.last_ms = Some(now);
            st.last_relayed = false;
        }
        self.inner.progress(p);
    }
}

impl<P: ProgressSink + Sync> RelayProgress for Relay<'_, P> {
    fn upstream(&self, page: u32, up: UpstreamProgress) {
        let now = self.now_ms();
        let report = {
            let Ok(mut st) = self.state.lock() else {
                return;
            };
            // the first report waits one interval, as the walk's own first one does
            if !progress_due(st.last_ms.unwrap_or(0), now, self.interval) {
                return;
            }
            st.last_ms = Some(now);
            st.last_relayed = true;
            let mut p = st.last.clone().unwrap_or(Progress {
                page,
                pages_max: self.pages_max,
                items: 0,
                requests: 0,
                requests_max: self.requests_max,
                elapsed_ms: 0,
                value: None,
                upstream: None,
            });
            p.page = p.page.max(page);
            p.elapsed_ms = now;
            p.upstream = Some(up);
            p
        };
        self.inner.progress(&report);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    struct Log(Mutex<Vec<Progress>>);
    impl ProgressSink for Log {
        fn progress(&self, p: &Progress) {
            self.0.lock().unwrap().push(p.clone());
        }
    }

    fn up(n: f64) -> UpstreamProgress {
        UpstreamProgress {
            progress: n,
            total: Some(10.0),
            message: None,
        }
    }

    #[test]
    fn m1_upstream_progress_shares_the_walks_throttle() {
        let log = Log(Mutex::new(Vec::new()));
        let limits = loopgate_engine::Limits {
            progress_interval: Duration::ZERO,
            ..Default::default()
        };
        let relay = Relay::new(&log, &limits);
        relay.upstream(1, up(1.0));
        relay.upstream(1, up(2.0));
        let seen = log.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].upstream, Some(up(2.0)));
        assert_eq!(seen[1].page, 1);

        // a long interval: upstream reports inside it are dropped
        let log = Log(Mutex::new(Vec::new()));
        let limits = loopgate_engine::Limits {
            progress_interval: Duration::from_secs(3600),
            ..Default::default()
        };
        let relay = Relay::new(&log, &limits);
        relay.upstream(1, up(1.0));
        assert!(log.0.lock().unwrap().is_empty());
    }

    #[test]
    fn m1_the_walks_report_after_a_relayed_one_waits_its_turn() {
        let log = Log(Mutex::new(Vec::new()));
        let limits = loopgate_engine::Limits {
            progress_interval: Duration::from_secs(3600),
            ..Default::default()
        };
        let relay = Relay::new(&log, &limits);
        let walk = Progress {
            page: 2,
            pages_max: 10,
            items: 40,
            requests: 2,
            requests_max: 20,
            elapsed_ms: 0,
            value: None,
            upstream: None,
        };
        // the walk's own reports pass (the engine throttles them)
        relay.progress(&walk);
        relay.progress(&walk);
        assert_eq!(log.0.lock().unwrap().len(), 2);
        // one relayed right after would come too soon: dropped; the state says so
        relay.upstream(2, up(1.0));
        assert_eq!(log.0.lock().unwrap().len(), 2);
        {
            let mut st = relay.state.lock().unwrap();
            st.last_relayed = true;
        }
        relay.progress(&walk);
        assert_eq!(
            log.0.lock().unwrap().len(),
            2,
            "inside the interval of a relayed report"
        );
    }
}
