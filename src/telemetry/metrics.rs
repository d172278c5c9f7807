//! Prometheus text metrics, kept in atomics and small labelled maps: no external
//! registry needed. What is worth alerting on: tool calls by outcome and tool kind, walk
//! pages / requests / items and stop reasons, upstream latency and status by provider,
//! rate-limit waits, cache hits / misses / shadow hits, size-guard cuts, stored-result
//! bytes, quota fallbacks, and (rendered from the pools at scrape time) pool saturation.
//! Label values are bounded sets (outcomes, kinds, reasons, status classes) or provider
//! ids (one per configured provider).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the upstream latency histogram.
const LATENCY_BUCKETS: [f64; 10] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// A counter family keyed by its rendered label set, e.g. `outcome="succeeded",kind="api"`.
#[derive(Default)]
pub struct Family(Mutex<BTreeMap<String, f64>>);

impl Family {
    pub fn add(&self, labels: &[(&str, &str)], by: f64) {
        let key = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect::<Vec<_>>()
            .join(",");
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *map.entry(key).or_default() += by;
    }

    pub fn inc(&self, labels: &[(&str, &str)]) {
        self.add(labels, 1.0);
    }

    fn render(&self, out: &mut String, name: &str) {
        let map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (labels, v) in map.iter() {
            let _ = writeln!(out, "{name}{{{labels}}} {v}");
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Lookups of the dataset cache's per-replica memory, by what was looked up (a decoded
/// entry, a presented result) and how it went; things evicted to stay within its bytes.
/// Plain atomics: they count every cache hit.
#[derive(Default)]
pub struct CacheMemoryCounters {
    pub entry_hits: AtomicU64,
    pub entry_misses: AtomicU64,
    /// Entries served before Redis confirmed their version, found replaced (or gone).
    pub entry_stale: AtomicU64,
    pub presented_hits: AtomicU64,
    pub presented_misses: AtomicU64,
    pub evicted: AtomicU64,
}

impl CacheMemoryCounters {
    fn render(&self, out: &mut String) {
        let name = "loopgate_cache_memory_total";
        let _ = writeln!(out, "# HELP {name} Lookups of the dataset cache's memory in this replica (decoded entries, presented results) by outcome, and things evicted to stay within cache_memory_bytes.");
        let _ = writeln!(out, "# TYPE {name} counter");
        for (kind, outcome, c) in [
            ("entry", "hit", &self.entry_hits),
            ("entry", "miss", &self.entry_misses),
            ("entry", "stale", &self.entry_stale),
            ("presented", "hit", &self.presented_hits),
            ("presented", "miss", &self.presented_misses),
            ("any", "evicted", &self.evicted),
        ] {
            let v = c.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}{{kind=\"{kind}\",outcome=\"{outcome}\"}} {v}");
        }
    }
}

/// Per-provider latency histograms: (bucket counts, sum, count).
#[derive(Default)]
struct Histograms(Mutex<BTreeMap<String, Histogram>>);

/// Bucket counts, sum of seconds, count.
type Histogram = ([u64; LATENCY_BUCKETS.len()], f64, u64);

/// One gauge sample taken at scrape time (pools, draining).
pub struct Gauge<'a> {
    pub name: &'a str,
    pub help: &'a str,
    pub labels: &'a [(&'a str, &'a str)],
    pub value: f64,
}

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
    /// Size-guard cuts of results entering a conversation (G1).
    pub guard_cuts: AtomicU64,
    /// Bytes written as stored results (G3).
    pub stored_result_bytes: AtomicU64,
    /// Tool-call record writes, and the statements that wrote them (group commit).
    pub record_writes: AtomicU64,
    pub record_statements: AtomicU64,
    /// K1: record writes tried again from the backlog (Postgres was out of reach).
    pub record_retries: AtomicU64,
    /// K1: calls left running by a replica that died, closed as interrupted.
    pub records_interrupted: AtomicU64,
    /// Quota decisions that fell back to per-process limits (Redis unreachable).
    pub quota_fallbacks: AtomicU64,
    /// Result-store operations served in process because Redis was unreachable.
    pub kv_fallbacks: AtomicU64,
    /// Agents taken from this replica's memory, and agent statements run
    /// (`call::agent_memory`).
    pub agent_memory_hits: AtomicU64,
    pub agent_loads: AtomicU64,
    rate_waits: AtomicU64,
    rate_wait_us: AtomicU64,
    /// `outcome`, `kind`.
    pub tool_calls_by: Family,
    /// `kind` = pages | requests | items.
    pub walk: Family,
    /// `reason` = a `_stoppedBy` value.
    pub walk_stops: Family,
    /// `provider`, `status` (HTTP status class, or `error` for no response).
    pub upstream_by: Family,
    /// `table`: rows deleted by retention passes.
    pub retention_pruned: Family,
    /// `mode` = inline | pool: jobs proportional to a payload's size (`walk::cpu_jobs`).
    pub cpu_jobs: Family,
    /// `mode` = hybrid | lexical: `search_tools` queries by how they were ranked (D5).
    pub search_queries: Family,
    /// Tool vectors computed by the embedding model (once per tool version, D5).
    pub tool_vectors_computed: AtomicU64,
    /// The dataset cache's memory in this replica (`results::cache_memory`).
    pub cache_memory: CacheMemoryCounters,
    /// `outcome` = due | started | skipped | missed | interrupted: schedules' due times
    /// as this replica handled them (`automate::scheduler`).
    pub schedule_runs: Family,
    /// How late scheduled runs were recorded after their due time (sum and count).
    schedule_lateness_us: AtomicU64,
    schedule_lateness_count: AtomicU64,
    /// `outcome` = succeeded | retry | failed: webhook delivery attempts (`automate::delivery`).
    pub webhook_deliveries: Family,
    upstream_latency: Histograms,
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

    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// A request waited `d` for a shared rate-limit permit.
    /// A scheduled run (or skipped one) recorded `late` after its due time.
    pub fn observe_schedule_lateness(&self, late: Duration) {
        self.schedule_lateness_us
            .fetch_add(late.as_micros() as u64, Ordering::Relaxed);
        self.schedule_lateness_count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn observe_rate_wait(&self, d: Duration) {
        Self::inc(&self.rate_waits);
        Self::add(&self.rate_wait_us, d.as_micros() as u64);
    }

    /// One upstream request to `provider`: its HTTP status (`None`: no response) and latency.
    pub fn observe_upstream(&self, provider: &str, status: Option<u16>, took: Duration) {
        let class = match status {
            Some(s) => format!("{}xx", s / 100),
            None => "error".to_string(),
        };
        self.upstream_by
            .inc(&[("provider", provider), ("status", &class)]);
        let secs = took.as_secs_f64();
        let mut map = self
            .upstream_latency
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (buckets, sum, count) = map.entry(provider.to_string()).or_default();
        for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *le {
                buckets[i] += 1;
            }
        }
        *sum += secs;
        *count += 1;
    }

    /// A finished walk: pages, requests, items and why it stopped.
    pub fn observe_walk(&self, pages: u32, requests: u32, items: usize, stop: Option<&str>) {
        self.walk.add(&[("kind", "pages")], f64::from(pages));
        self.walk.add(&[("kind", "requests")], f64::from(requests));
        self.walk.add(&[("kind", "items")], items as f64);
        if let Some(reason) = stop {
            self.walk_stops.inc(&[("reason", reason)]);
        }
    }

    /// Renders the Prometheus text exposition format (version 0.0.4), with `gauges`
    /// sampled by the caller (pool sizes, draining) appended.
    pub fn render_with(&self, gauges: &[Gauge<'_>]) -> String {
        let mut out = self.render();
        let mut last = "";
        for g in gauges {
            if g.name != last {
                let _ = writeln!(out, "# HELP {} {}", g.name, g.help);
                let _ = writeln!(out, "# TYPE {} gauge", g.name);
                last = g.name;
            }
            let labels = g
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect::<Vec<_>>()
                .join(",");
            if labels.is_empty() {
                let _ = writeln!(out, "{} {}", g.name, g.value);
            } else {
                let _ = writeln!(out, "{}{{{labels}}} {}", g.name, g.value);
            }
        }
        out
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
        let secs = |us: u64| us as f64 / 1e6;
        let counters: [(&str, &str, f64); 22] = [
            ("loopgate_http_duration_seconds_sum", "Total time spent answering HTTP requests.", secs(g(&self.http_duration_us_sum))),
            ("loopgate_upstream_requests_total", "Requests sent to upstream APIs.", g(&self.upstream_requests) as f64),
            ("loopgate_upstream_failures_total", "Upstream requests that failed.", g(&self.upstream_failures) as f64),
            ("loopgate_tool_calls_total", "Tool calls executed.", g(&self.tool_calls) as f64),
            ("loopgate_cache_hits_total", "Tool calls served from the dataset cache.", g(&self.cache_hits) as f64),
            ("loopgate_cache_misses_total", "Cacheable tool calls not found in the dataset cache.", g(&self.cache_misses) as f64),
            ("loopgate_cache_shadow_hits_total", "Calls in shadow mode that would have been served from the cache.", g(&self.cache_shadow_hits) as f64),
            ("loopgate_size_guard_cuts_total", "Results cut by the size guard before entering a conversation.", g(&self.guard_cuts) as f64),
            ("loopgate_stored_result_bytes_total", "Bytes written as stored results (_resultId).", g(&self.stored_result_bytes) as f64),
            ("loopgate_tool_call_record_writes_total", "Tool-call record writes (a running row, its end, or a call written once).", g(&self.record_writes) as f64),
            ("loopgate_tool_call_record_statements_total", "Statements that wrote tool-call records (writes queued together share one).", g(&self.record_statements) as f64),
            ("loopgate_tool_call_record_retries_total", "Tool-call record writes tried again from the backlog kept while Postgres was out of reach (K1).", g(&self.record_retries) as f64),
            ("loopgate_tool_call_records_interrupted_total", "Calls left running by a replica that stopped, closed as interrupted by this one (K1).", g(&self.records_interrupted) as f64),
            ("loopgate_rate_limit_waits_total", "Upstream requests that waited for a shared rate-limit permit.", g(&self.rate_waits) as f64),
            ("loopgate_rate_limit_wait_seconds_total", "Time upstream requests waited for shared rate-limit permits.", secs(g(&self.rate_wait_us))),
            ("loopgate_quota_fallbacks_total", "Quota decisions made per process because Redis was unreachable (limits divided by the replica count).", g(&self.quota_fallbacks) as f64),
            ("loopgate_result_store_fallbacks_total", "Stored-result, thread-mark and dataset-cache operations kept in process because Redis was unreachable.", g(&self.kv_fallbacks) as f64),
            ("loopgate_agent_memory_hits_total", "Tool calls, steps and workflow runs that took their agent (and thread) from this replica's memory, reading no agent statement.", g(&self.agent_memory_hits) as f64),
            ("loopgate_tool_vectors_computed_total", "Tool vectors computed by the embedding model for search (D5; once per tool version and replica).", g(&self.tool_vectors_computed) as f64),
            ("loopgate_schedule_lateness_seconds_sum", "How late scheduled runs were recorded after their due times, summed.", secs(g(&self.schedule_lateness_us))),
            ("loopgate_schedule_lateness_seconds_count", "Scheduled runs (skipped ones included) whose lateness is in the sum.", g(&self.schedule_lateness_count) as f64),
            ("loopgate_agent_loads_total", "Agent statements run (an agent not remembered, or remembered at an older config epoch or past agent_memory_seconds).", g(&self.agent_loads) as f64),
        ];
        for (name, help, v) in counters {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {v}");
        }
        let families = [
            (
                "loopgate_tool_calls_by_outcome_total",
                "Tool calls by outcome and tool kind.",
                &self.tool_calls_by,
            ),
            (
                "loopgate_walk_total",
                "Walk pages, upstream requests and items, summed over tool calls.",
                &self.walk,
            ),
            (
                "loopgate_walk_stops_total",
                "Walks by the reason they stopped (_stoppedBy).",
                &self.walk_stops,
            ),
            (
                "loopgate_upstream_responses_total",
                "Upstream requests by provider and HTTP status class.",
                &self.upstream_by,
            ),
            (
                "loopgate_retention_pruned_rows_total",
                "Rows deleted by retention passes, by table.",
                &self.retention_pruned,
            ),
            (
                "loopgate_schedule_due_times_total",
                "Schedules' due times by what became of them: due, started, skipped (overlap), missed (catch_up), interrupted (replica lost mid-run).",
                &self.schedule_runs,
            ),
            (
                "loopgate_webhook_delivery_attempts_total",
                "Webhook delivery attempts by outcome: succeeded, retry (will be tried again), failed (given up).",
                &self.webhook_deliveries,
            ),
            (
                "loopgate_cpu_jobs_total",
                "Jobs proportional to a payload's size, run in place (small) or on the blocking pool.",
                &self.cpu_jobs,
            ),
            (
                "loopgate_search_queries_total",
                "search_tools queries by ranking: hybrid (words and meaning) or lexical (no embedding model).",
                &self.search_queries,
            ),
        ];
        for (name, help, family) in families {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            family.render(&mut out, name);
        }
        self.cache_memory.render(&mut out);
        self.render_latency(&mut out);
        out
    }

    fn render_latency(&self, out: &mut String) {
        let name = "loopgate_upstream_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Upstream request latency by provider (rate-limit waits included)."
        );
        let _ = writeln!(out, "# TYPE {name} histogram");
        let map = self
            .upstream_latency
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (provider, (buckets, sum, count)) in map.iter() {
            let p = escape(provider);
            for (le, n) in LATENCY_BUCKETS.iter().zip(buckets) {
                let _ = writeln!(out, "{name}_bucket{{provider=\"{p}\",le=\"{le}\"}} {n}");
            }
            let _ = writeln!(out, "{name}_bucket{{provider=\"{p}\",le=\"+Inf\"}} {count}");
            let _ = writeln!(out, "{name}_sum{{provider=\"{p}\"}} {sum}");
            let _ = writeln!(out, "{name}_count{{provider=\"{p}\"}} {count}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn labelled_families_and_histograms_render_as_prometheus_text() {
        let m = Metrics::default();
        m.tool_calls_by
            .inc(&[("outcome", "succeeded"), ("kind", "api")]);
        m.tool_calls_by
            .inc(&[("outcome", "succeeded"), ("kind", "api")]);
        m.observe_upstream("prv_1", Some(503), Duration::from_millis(30));
        m.observe_walk(3, 4, 250, Some("end"));
        let text = m.render_with(&[Gauge {
            name: "loopgate_pool_connections",
            help: "Pool connections.",
            labels: &[("pool", "postgres"), ("state", "in_use")],
            value: 2.0,
        }]);
        assert!(text.contains(
            "loopgate_tool_calls_by_outcome_total{outcome=\"succeeded\",kind=\"api\"} 2"
        ));
        assert!(
            text.contains("loopgate_upstream_responses_total{provider=\"prv_1\",status=\"5xx\"} 1")
        );
        assert!(text.contains(
            "loopgate_upstream_duration_seconds_bucket{provider=\"prv_1\",le=\"0.025\"} 0"
        ));
        assert!(text.contains(
            "loopgate_upstream_duration_seconds_bucket{provider=\"prv_1\",le=\"0.05\"} 1"
        ));
        assert!(text.contains("loopgate_walk_total{kind=\"items\"} 250"));
        assert!(text.contains("loopgate_walk_stops_total{reason=\"end\"} 1"));
        assert!(text.contains("loopgate_pool_connections{pool=\"postgres\",state=\"in_use\"} 2"));
    }
}
