//! Prometheus text metrics kept in atomics: request counts by status class and
//! route-independent counters the runtime increments. No external registry needed.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub struct Metrics {
    http_2xx: AtomicU64,
    http_3xx: AtomicU64,
    http_4xx: AtomicU64,
    http_5xx: AtomicU64,
    http_duration_us_sum: AtomicU64,
    pub upstream_requests: AtomicU64,
    pub upstream_failures: AtomicU64,
    pub tool_calls: AtomicU64,
    pub cache_hits: AtomicU64,
    pub cache_misses: AtomicU64,
    pub cache_shadow_hits: AtomicU64,
}

impl Metrics {
    pub fn observe_http(&self, status: u16, micros: u64) {
        let bucket = match status {
            200..=299 => &self.http_2xx,
            300..=399 => &self.http_3xx,
            400..=499 => &self.http_4xx,
            _ => &self.http_5xx,
        };
        bucket.fetch_add(1, Ordering::Relaxed);
        self.http_duration_us_sum
            .fetch_add(micros, Ordering::Relaxed);
    }

    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Renders the Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::new();
        out.push_str("# HELP loopgate_http_responses_total HTTP responses by status class.\n");
        out.push_str("# TYPE loopgate_http_responses_total counter\n");
        for (class, c) in [
            ("2xx", &self.http_2xx),
            ("3xx", &self.http_3xx),
            ("4xx", &self.http_4xx),
            ("5xx", &self.http_5xx),
        ] {
            let _ = writeln!(
                out,
                "loopgate_http_responses_total{{class=\"{class}\"}} {}",
                g(c)
            );
        }
        let counters = [
            (
                "loopgate_http_duration_seconds_sum",
                "Total time spent answering HTTP requests.",
                None,
            ),
            (
                "loopgate_upstream_requests_total",
                "Requests sent to upstream APIs.",
                Some(&self.upstream_requests),
            ),
            (
                "loopgate_upstream_failures_total",
                "Upstream requests that failed.",
                Some(&self.upstream_failures),
            ),
            (
                "loopgate_tool_calls_total",
                "Tool calls executed.",
                Some(&self.tool_calls),
            ),
            (
                "loopgate_cache_hits_total",
                "Tool calls served from the dataset cache.",
                Some(&self.cache_hits),
            ),
            (
                "loopgate_cache_misses_total",
                "Cacheable tool calls not found in the dataset cache.",
                Some(&self.cache_misses),
            ),
            (
                "loopgate_cache_shadow_hits_total",
                "Calls in shadow mode that would have been served from the cache.",
                Some(&self.cache_shadow_hits),
            ),
        ];
        for (name, help, counter) in counters {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            match counter {
                Some(c) => {
                    let _ = writeln!(out, "{name} {}", g(c));
                }
                None => {
                    let secs = g(&self.http_duration_us_sum) as f64 / 1e6;
                    let _ = writeln!(out, "{name} {secs}");
                }
            }
        }
        out
    }
}
