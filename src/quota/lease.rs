//! A replica's lease of permits from a shared GCRA ([`Shared::lease`]): one `EVAL` takes
//! up to `L` permits at once, this replica spends them locally without asking Redis again,
//! and comes back when they are spent or the lease is old. One [`RateLease`] per quota key
//! per process (an org's API rate, a provider's `rate_limit`).
//!
//! # What bounds it
//! - Size: a lease is at most `L = min(burst, LEASE_MAX)` permits — never more than the
//!   limit's own burst, so a burst-1 limit leases one permit, spent at once by the request
//!   that asked for it: one `EVAL` per request, exactly as without leases (P9's pacing of a
//!   burst-1 provider is unchanged). A lease is sized at ¾ of this replica's recent demand
//!   (requests queued on it included), at most twice the last one, so it is usually spent.
//! - Age: a lease is dropped `A = max(one emission interval, LEASE_MIN_AGE)` after its
//!   `EVAL` was sent, spent or not, so an idle replica holds nothing usable. Unspent
//!   permits are lost, never given back (that would take another round trip): they were
//!   counted against the quota, so a lost permit can only refuse early, never admit more.
//! - Memory: one small struct per key; [`super::org::OrgRequests`] prunes idle ones.
//!
//! # The exact bound on over-admission (all replicas together)
//! The shared GCRA counts a leased permit when it is granted; it is spent on one replica
//! within `A` of that. So in any window of length `W`, the N replicas together admit at most
//! `burst + rate × W` (what the GCRA alone admits, i.e. without leases)
//! `+ min(N × (L − 1), ⌊rate × A⌋)`: only permits leased before the window and still unspent
//! when it opens can land in it, at most `L − 1` per replica (the taker spends one at
//! once), and they were granted at most `A` before it. For burst 1 that is `+ 0`; for a
//! rate of at most 100/s it is at most `+ 1` (`A` is one interval); above, at most 1% of
//! a second's worth (`A` = 10 ms). Lease ages are measured on this replica's monotonic
//! clock from before the `EVAL` is sent, so Redis counted the permits no earlier than that.
//!
//! # Refusals and Redis outages
//! A refusal is remembered until the time Redis named (no permit can appear sooner: other
//! replicas only take more), so requests refused meanwhile cost no round trip. Requests
//! arriving while another one is asking Redis wait for its answer instead of asking too;
//! if Redis failed to answer after they arrived, they get [`Decision::Unavailable`] at once
//! (the caller's per-process fallback then decides, as before).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(test)]
use std::sync::Arc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{Decision, Grant, Shared};

/// The largest lease, whatever the burst.
pub const LEASE_MAX: u32 = 64;
/// The shortest time a lease is kept (see the module header: `A`).
pub const LEASE_MIN_AGE: Duration = Duration::from_millis(10);

/// A request counted among those waiting for another's `EVAL` until it takes its turn —
/// or is dropped while waiting (its client left, its walk was cut): a count left behind
/// would size every later lease for requests that are gone, and their permits would be
/// lost unspent, refusing the quota's own traffic early.
struct InQueue<'a>(Option<&'a AtomicU32>);

impl<'a> InQueue<'a> {
    fn enter(waiting: &'a AtomicU32) -> Self {
        waiting.fetch_add(1, Ordering::AcqRel);
        InQueue(Some(waiting))
    }

    /// Its turn came: how many were waiting then, itself included.
    fn leave(mut self) -> u32 {
        self.0
            .take()
            .map_or(1, |w| w.fetch_sub(1, Ordering::AcqRel))
    }
}

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.0.take() {
            w.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Where a lease reads the time: the monotonic clock, or (tests) one they drive, so a
/// lease's age and a remembered refusal do not depend on how fast the machine runs.
enum LeaseClock {
    System,
    #[cfg(test)]
    Driven(Arc<Mutex<Instant>>),
}

impl LeaseClock {
    fn now(&self) -> Instant {
        match self {
            LeaseClock::System => Instant::now(),
            #[cfg(test)]
            LeaseClock::Driven(t) => *t.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }
}

/// One quota key's lease on this replica.
pub struct RateLease {
    key: String,
    rps: f64,
    burst: u32,
    cap: u32,
    max_age: Duration,
    state: Mutex<State>,
    /// One `EVAL` at a time per key: others wait for its lease.
    asking: tokio::sync::Mutex<()>,
    waiting: AtomicU32,
    asked: AtomicU64,
    clock: LeaseClock,
}

#[derive(Default)]
struct State {
    /// Permits of the current lease not spent yet.
    left: u32,
    /// Permits of the current lease spent (the taker's own included).
    spent: u32,
    /// When the `EVAL` that granted the current lease was sent.
    taken: Option<Instant>,
    /// Redis said no permit before this.
    denied_until: Option<Instant>,
    /// When Redis last failed to answer.
    failed_at: Option<Instant>,
}

impl RateLease {
    /// `rps` per second with `burst` under `key`, for all replicas together.
    pub fn new(key: String, rps: f64, burst: u32) -> Self {
        let burst = burst.max(1);
        let interval = Duration::try_from_secs_f64(1.0 / rps).unwrap_or(Duration::MAX);
        RateLease {
            key,
            rps,
            burst,
            cap: burst.min(LEASE_MAX),
            max_age: interval.max(LEASE_MIN_AGE),
            state: Mutex::default(),
            asking: tokio::sync::Mutex::new(()),
            waiting: AtomicU32::new(0),
            asked: AtomicU64::new(0),
            clock: LeaseClock::System,
        }
    }

    /// The same on a clock the test drives (it starts at `Instant::now()` and moves only
    /// when the test moves it).
    #[cfg(test)]
    pub(crate) fn driven(key: String, rps: f64, burst: u32) -> (Self, Arc<Mutex<Instant>>) {
        let time = Arc::new(Mutex::new(Instant::now()));
        let lease = RateLease {
            clock: LeaseClock::Driven(time.clone()),
            ..Self::new(key, rps, burst)
        };
        (lease, time)
    }

    /// Now, on this lease's clock.
    fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The largest lease (`L`) and the longest it is kept (`A`).
    pub fn bounds(&self) -> (u32, Duration) {
        (self.cap, self.max_age)
    }

    /// How many times this process asked Redis for a lease of this key.
    pub fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Decided without Redis: a permit of the live lease, or the remembered refusal.
    fn local(&self, now: Instant) -> Option<Decision> {
        let mut s = self.state();
        let young = s
            .taken
            .is_some_and(|t| now.saturating_duration_since(t) < self.max_age);
        if s.left > 0 && young {
            s.left -= 1;
            s.spent += 1;
            return Some(Decision::Allowed);
        }
        match s.denied_until {
            Some(until) if until > now => Some(Decision::Wait(until - now)),
            _ => None,
        }
    }

    /// Whether this key holds nothing (no usable lease, no refusal to remember).
    pub fn is_idle(&self, now: Instant) -> bool {
        let s = self.state();
        let young = s
            .taken
            .is_some_and(|t| now.saturating_duration_since(t) < self.max_age);
        !(s.left > 0 && young) && s.denied_until.is_none_or(|u| u <= now)
    }

    /// How many permits to ask for: ¾ of the demand seen since the last lease was taken,
    /// per `A`, at most twice that lease, at least those queued now; within `1..=L`.
    fn size(&self, s: &State, now: Instant, queued: u32) -> u32 {
        let recent = match s.taken {
            Some(t) => {
                let age = now.saturating_duration_since(t).as_secs_f64().max(1e-6);
                let per_age = f64::from(s.spent + 1) * self.max_age.as_secs_f64() / age;
                let last = s.spent + s.left;
                ((per_age * 0.75).floor() as u32).min(last.saturating_mul(2))
            }
            None => 1,
        };
        recent.max(queued).clamp(1, self.cap)
    }

    /// One permit: [`Decision::Allowed`] (taken), `Wait` (nothing taken) or `Unavailable`.
    pub async fn take(&self, shared: &Shared) -> Decision {
        let arrived = self.now();
        if let Some(d) = self.local(arrived) {
            return d;
        }
        let in_queue = InQueue::enter(&self.waiting);
        let _turn = self.asking.lock().await;
        // those queued behind this request (itself included) will spend from its lease
        let queued = in_queue.leave();
        let now = self.now();
        if let Some(d) = self.local(now) {
            return d;
        }
        let want = {
            let s = self.state();
            if s.failed_at.is_some_and(|f| f >= arrived) {
                return Decision::Unavailable;
            }
            self.size(&s, now, queued)
        };
        let sent = self.now();
        self.asked.fetch_add(1, Ordering::Relaxed);
        let grant = shared.lease(&self.key, self.rps, self.burst, want).await;
        let mut s = self.state();
        match grant {
            Grant::Granted(n) => {
                s.left = n.saturating_sub(1);
                s.spent = 1;
                s.taken = Some(sent);
                s.denied_until = None;
                Decision::Allowed
            }
            Grant::Denied(wait) => {
                s.denied_until = Some(sent + wait);
                Decision::Wait(wait)
            }
            Grant::Unavailable => {
                s.failed_at = Some(self.now());
                Decision::Unavailable
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use futures_util::FutureExt;

    use super::*;
    use crate::telemetry::metrics::Metrics;

    /// A request dropped while it waited for another's `EVAL` (a client gone, a walk cut)
    /// is no longer counted as queued: the next lease is sized for the requests really
    /// there. Before, the count stayed up for good, every later lease asked for permits
    /// nobody would spend, and they were lost, refusing the org's (or the provider's) own
    /// traffic early.
    #[tokio::test]
    async fn a_request_dropped_while_queued_is_not_counted_any_more() {
        // no Redis: every lease is granted as asked, so its size shows what was asked
        let shared = Shared::new(None, 1, Arc::new(Metrics::default()));
        let lease = RateLease::new("lg:test:queued".into(), 100.0, 50);
        let other = lease.asking.lock().await;
        assert!(
            lease.take(&shared).now_or_never().is_none(),
            "it waits for the other request's EVAL"
        );
        drop(other);
        assert_eq!(lease.waiting.load(Ordering::Acquire), 0);
        assert_eq!(lease.take(&shared).await, Decision::Allowed);
        let s = lease.state();
        assert_eq!(
            (s.left, s.spent),
            (0, 1),
            "one permit asked for the one request there"
        );
    }
}
