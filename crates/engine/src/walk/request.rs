//! P3: one upstream request with retries. Every attempt counts against the request and
//! time budgets; transient failures back off (honouring `Retry-After`) only while the
//! budget allows.

use crate::limits::Limits;
pub use crate::outcome::verdict::Failed;
use crate::outcome::StopReason;
use crate::ports::{Clock, Upstream, UpstreamFailure, UpstreamRequest, UpstreamResponse};
use crate::walk::ahead::{Ahead, Refused};
use std::time::Duration;

/// Shared across every collection of one call (E5).
#[derive(Debug)]
pub struct Budget {
    pub start_ms: u64,
    pub requests: u32,
    pub bytes: usize,
    pub items: usize,
}

impl Budget {
    pub fn new(start_ms: u64) -> Self {
        Self {
            start_ms,
            requests: 0,
            bytes: 0,
            items: 0,
        }
    }

    pub fn elapsed(&self, clock: &impl Clock) -> Duration {
        Duration::from_millis(clock.now_ms().saturating_sub(self.start_ms))
    }

    /// The first call-wide bound already reached, if any.
    pub fn exhausted(&self, limits: &Limits, clock: &impl Clock) -> Option<StopReason> {
        if clock.cancelled() {
            Some(StopReason::Cancelled)
        } else if self.items >= limits.items {
            Some(StopReason::Items)
        } else if self.requests >= limits.requests {
            Some(StopReason::Requests)
        } else if self.bytes >= limits.bytes {
            Some(StopReason::Bytes)
        } else if self.elapsed(clock) >= limits.wall {
            Some(StopReason::Time)
        } else {
            None
        }
    }
}

/// Makes `req` for collection `owner` through `ahead` (P9: its answer may already be on
/// its way), counting each attempt exactly as a sequential walk would.
pub async fn fetch<U: Upstream + Sync, C: Clock>(
    ahead: &mut Ahead<'_, U>,
    owner: usize,
    clock: &C,
    limits: &Limits,
    budget: &mut Budget,
    mut req: UpstreamRequest,
) -> Result<UpstreamResponse, Failed> {
    let mut attempt = 0u32;
    loop {
        if let Some(stop) = budget
            .exhausted(limits, clock)
            .filter(|s| *s != StopReason::Items)
        {
            return Err(Failed {
                stop,
                status: None,
                message: format!("{} budget used up", stop.as_str()),
                tool_error: false,
            });
        }
        budget.requests += 1;
        req.timeout = limits.wall.saturating_sub(budget.elapsed(clock));
        req.attempt = attempt + 1;
        let room = limits.requests.saturating_sub(budget.requests);
        // the upstream classified the failure (transient or not, `Retry-After`); what to do
        // about it — retry, wait, give up — is decided here
        let answer = match ahead.call(owner, req.clone(), room).await {
            Ok(answer) => answer,
            // P9: requests started ahead and never taken used the rest of the budget; this
            // one is not sent, and the walk stops as at the bound
            Err(Refused) => {
                budget.requests -= 1;
                let stop = StopReason::Requests;
                return Err(Failed {
                    stop,
                    status: None,
                    message: format!("{} budget used up", stop.as_str()),
                    tool_error: false,
                });
            }
        };
        let failure = match answer {
            Ok(resp) => {
                budget.bytes += resp.body.len();
                return Ok(resp);
            }
            Err(f) => UpstreamFailure {
                message: clip(&f.message),
                ..f
            },
        };
        if clock.cancelled() {
            // M3: the call was cancelled while the request ran (the runtime abandons it)
            return Err(Failed {
                stop: StopReason::Cancelled,
                status: failure.status,
                message: "the call was cancelled".to_owned(),
                tool_error: false,
            });
        }
        if budget.elapsed(clock) >= limits.wall {
            // the request ran into the wall-clock bound: that bound ended the walk
            return Err(Failed {
                stop: StopReason::Time,
                status: failure.status,
                message: format!("{} (the time limit was reached)", failure.message),
                tool_error: failure.tool_error,
            });
        }
        attempt += 1;
        if !failure.transient || attempt > limits.retries {
            return Err(Failed {
                stop: StopReason::UpstreamError,
                status: failure.status,
                message: failure.message,
                tool_error: failure.tool_error,
            });
        }
        let backoff = Duration::from_millis(250u64 << attempt.min(6));
        let wait = failure.retry_after.unwrap_or(backoff);
        if budget.elapsed(clock) + wait >= limits.wall {
            // Say when the API will take the request again, so the model can tell the
            // person (or call again) instead of retrying at once.
            let why = match failure.retry_after {
                Some(ra) => format!(
                    "the API asked to retry after {} s, past this call's time limit",
                    ra.as_secs()
                ),
                None => "a retry would have passed the time limit".to_owned(),
            };
            return Err(Failed {
                stop: StopReason::UpstreamError,
                status: failure.status,
                message: format!("{} ({why})", failure.message),
                tool_error: failure.tool_error,
            });
        }
        clock.sleep(wait).await;
    }
}

/// Longest upstream message carried into a result (a `_forEachErrors` entry, a note): the
/// size guard counts on it when forty values fail at once.
const MESSAGE_CHARS: usize = 300;

fn clip(message: &str) -> String {
    match message.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}
