//! Webhook delivery (W7): every replica polls Postgres for due deliveries and claims
//! them (`store::webhooks::claim_due`: `FOR UPDATE SKIP LOCKED`, at most
//! [`PER_ENDPOINT`] in flight per endpoint across replicas), then sends each in a task
//! of its own, so a slow or failing endpoint holds up neither runs (they only queue a
//! row) nor other endpoints. The POST goes through the upstream client, the one owner
//! of the SSRF guard, with redirects off. Any 2xx succeeds; anything else (a status, a
//! timeout, a refused connection) is retried after `webhook_retry_base_ms`, doubling per
//! attempt (at most [`MAX_BACKOFF`]), until [`RETRY_WINDOW`] has passed since the run
//! finished; then the delivery is `failed`. Every attempt is recorded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use secrecy::SecretString;
use serde_json::json;
use sqlx::PgPool;
use tokio::sync::Semaphore;

use super::signature;
use crate::crypto::Cipher;
use crate::store::providers::{AuthType, ProviderAuth};
use crate::store::webhooks::{self, Attempt, Claimed};
use crate::telemetry::metrics::Metrics;
use crate::upstream::{Request, Target, UpstreamClient};
use crate::walk::drain::Drain;

/// Deliveries one endpoint has in flight at once, all replicas together.
pub const PER_ENDPOINT: i64 = 2;
/// Retries go on at least this long after a delivery was queued.
pub const RETRY_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(6 * 3600);

#[derive(Clone)]
pub struct Config {
    pub poll: Duration,
    pub retry_base: Duration,
    /// Sends in flight on this replica.
    pub concurrency: usize,
}

/// What the workers share.
pub struct Deliverer {
    pub pool: PgPool,
    pub cipher: Cipher,
    /// Built for webhooks: the SSRF guard of every upstream request, no redirects.
    pub http: UpstreamClient,
    pub metrics: Arc<Metrics>,
    pub drain: Arc<Drain>,
    pub cfg: Config,
}

/// The wait before attempt `attempt + 1` after attempt `attempt` failed.
pub fn backoff(base: Duration, attempt: i32) -> Duration {
    let doublings = u32::try_from(attempt.saturating_sub(1))
        .unwrap_or(0)
        .min(30);
    base.saturating_mul(1u32 << doublings).min(MAX_BACKOFF)
}

/// After a failed attempt: when to try again, or `None` to give up.
pub fn next_attempt(
    base: Duration,
    attempt: i32,
    queued: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let window = chrono::Duration::from_std(RETRY_WINDOW).unwrap_or_default();
    if now - queued >= window {
        return None;
    }
    let wait = chrono::Duration::from_std(backoff(base, attempt)).unwrap_or_default();
    Some(now + wait)
}

impl Deliverer {
    /// Polls and sends for as long as the process lives (stops claiming once draining).
    pub fn spawn(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let permits = Arc::new(Semaphore::new(self.cfg.concurrency.max(1)));
            let mut tick = tokio::time::interval(self.cfg.poll);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if self.drain.is_draining() {
                    return;
                }
                let free = permits.available_permits() as i64;
                if free == 0 {
                    continue;
                }
                let lease = self.http.config().timeout + Duration::from_secs(10);
                let claimed =
                    match webhooks::claim_due(&self.pool, free, PER_ENDPOINT, lease.as_secs_f64())
                        .await
                    {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(error = %e, "could not claim webhook deliveries");
                            continue;
                        }
                    };
                for c in claimed {
                    let Ok(permit) = permits.clone().acquire_owned().await else {
                        return;
                    };
                    let me = self.clone();
                    tokio::spawn(async move {
                        me.send(c).await;
                        drop(permit);
                    });
                }
            }
        })
    }

    fn secrets(&self, c: &Claimed) -> Vec<SecretString> {
        let aad = c.endpoint_id.as_bytes();
        [Some(&c.secret), c.previous_secret.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|sealed| {
                let plain = self.cipher.decrypt(sealed, aad).ok()?;
                String::from_utf8(plain).ok().map(SecretString::from)
            })
            .collect()
    }

    /// One attempt of one claimed delivery, recorded.
    async fn send(&self, c: Claimed) {
        let started = Instant::now();
        let timestamp = Utc::now().timestamp();
        let signature = signature::header(&self.secrets(&c), &c.id, timestamp, &c.payload);
        let headers = vec![
            ("webhook-id".to_string(), c.id.clone()),
            ("webhook-timestamp".to_string(), timestamp.to_string()),
            ("webhook-signature".to_string(), signature),
        ];
        let target = Target::new(
            &c.url,
            "POST",
            "",
            &json!({}),
            ProviderAuth {
                kind: AuthType::None,
                name: None,
            },
            None,
        );
        let request = Request::Rpc {
            body: c.payload.as_bytes(),
            headers: &headers,
        };
        let timeout = self.http.config().timeout;
        let sent = self.http.send(&target, request, None, timeout).await;
        let duration_ms = i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX);
        let (status_code, error) = match &sent {
            Ok(r) => (Some(i32::from(r.status)), None),
            Err(e) => (e.status().map(i32::from), Some(e.to_string())),
        };
        let now = Utc::now();
        let (outcome, next) = match sent {
            Ok(_) => ("succeeded", None),
            Err(_) => match next_attempt(self.cfg.retry_base, c.attempt, c.created_at, now) {
                Some(at) => ("pending", Some(at)),
                None => ("failed", None),
            },
        };
        let label = if outcome == "pending" {
            "retry"
        } else {
            outcome
        };
        self.metrics.webhook_deliveries.inc(&[("outcome", label)]);
        // the excerpt of a non-2xx body may be long: the record keeps its start
        let error: Option<String> = error.map(|e| e.chars().take(300).collect());
        let attempt = Attempt {
            status_code,
            error: error.as_deref(),
            duration_ms,
            outcome,
            next_attempt_at: next,
        };
        if let Err(e) = webhooks::record_attempt(&self.pool, &c.id, c.attempt, &attempt).await {
            // the claim runs out and the attempt is made again
            tracing::warn!(delivery = %c.id, error = %e, "could not record a delivery attempt");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_from_the_base_up_to_the_cap_w7() {
        let base = Duration::from_millis(5000);
        assert_eq!(backoff(base, 1), Duration::from_secs(5));
        assert_eq!(backoff(base, 2), Duration::from_secs(10));
        assert_eq!(backoff(base, 5), Duration::from_secs(80));
        assert_eq!(backoff(base, 40), MAX_BACKOFF);
        assert_eq!(backoff(base, 0), Duration::from_secs(5));
    }

    #[test]
    fn retries_cover_at_least_a_day_then_give_up_w7() {
        let base = Duration::from_millis(5000);
        let queued = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // an endpoint that never answers: attempts follow the schedule until a day passed
        let mut now = queued;
        let mut attempt = 1;
        while let Some(next) = next_attempt(base, attempt, queued, now) {
            assert!(next > now);
            now = next;
            attempt += 1;
            assert!(attempt < 100, "retries must end");
        }
        assert!(now - queued >= chrono::Duration::hours(24));
        // not much past a day either: one back-off at most
        assert!(
            now - queued
                < chrono::Duration::hours(24) + chrono::Duration::from_std(MAX_BACKOFF).unwrap()
        );
        assert!(attempt > 10, "{attempt} attempts");
    }
}
