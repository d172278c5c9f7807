//! The service's Prometheus metrics, kept by `prometheus-client` (the Prometheus
//! project's Rust client) in one registry per [`Metrics`], rendered as OpenMetrics text.
//! What is worth alerting on: HTTP responses and latency, tool calls by outcome and tool
//! kind, walks (pages / requests / items, stop reasons, outcomes and duration per
//! provider), upstream latency and status by provider, rate-limit waits, cache hits /
//! misses / shadow hits, size-guard cuts, stored-result bytes, quota fallbacks, and
//! (rendered from the pools at scrape time) pool saturation.
//!
//! Call sites keep one function or field per metric (`Metrics::inc(&m.cache_hits)`,
//! `m.observe_upstream(..)`), so a new metric is one field, one registration and one
//! function here. Label values are bounded sets (outcomes, kinds, reasons, status
//! classes) or provider ids, and provider ids are capped ([`PROVIDER_SERIES`]): past
//! the cap, a new provider's series is `provider="other"`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family as LabelledFamily;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upper bounds (seconds) of the upstream and HTTP latency histograms.
const LATENCY_BUCKETS: [f64; 10] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
/// Upper bounds (seconds) of walk durations and rate-limit waits: longer tails.
const LONG_BUCKETS: [f64; 11] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
/// Distinct providers given series of their own in one replica; later ones share
/// `provider="other"`, so a tenant creating providers cannot grow the scrape unbounded.
pub const PROVIDER_SERIES: usize = 200;

type Labels = Vec<(String, String)>;
type Histograms = LabelledFamily<Labels, Histogram, fn() -> Histogram>;

fn latency() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

fn long() -> Histogram {
    Histogram::new(LONG_BUCKETS)
}

fn labels(l: &[(&str, &str)]) -> Labels {
    l.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A counter family with labels given at each call, e.g. `[("outcome", "succeeded")]`.
#[derive(Default, Clone, Debug)]
pub struct Family(LabelledFamily<Labels, Counter>);

impl Family {
    pub fn add(&self, labels: &[(&str, &str)], by: f64) {
        self.0
            .get_or_create(&self::labels(labels))
            .inc_by(by.max(0.0) as u64);
    }

    pub fn inc(&self, labels: &[(&str, &str)]) {
        self.add(labels, 1.0);
    }

    /// The counter of one label set, to keep as a field.
    fn handle(&self, labels: &[(&str, &str)]) -> Counter {
        self.0.get_or_create(&self::labels(labels)).clone()
    }
}

/// Provider ids allowed a series of their own: the first [`PROVIDER_SERIES`] seen.
#[derive(Default)]
struct ProviderLabels(Mutex<HashSet<String>>);

impl ProviderLabels {
    fn label<'a>(&self, provider: &'a str) -> &'a str {
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.contains(provider) {
            return provider;
        }
        if seen.len() < PROVIDER_SERIES {
            seen.insert(provider.to_string());
            return provider;
        }
        "other"
    }
}

/// Lookups of the dataset cache's per-replica memory, by what was looked up (a decoded
/// entry, a presented result) and how it went; things evicted to stay within its bytes.
/// One counter per series of `loopgate_cache_memory_total`.
#[derive(Debug, Clone)]
pub struct CacheMemoryCounters {
    pub entry_hits: Counter,
    pub entry_misses: Counter,
    /// Entries served before Redis confirmed their version, found replaced (or gone).
    pub entry_stale: Counter,
    pub presented_hits: Counter,
    pub presented_misses: Counter,
    pub evicted: Counter,
}

impl CacheMemoryCounters {
    fn new(f: &Family) -> Self {
        let h = |kind, outcome| f.handle(&[("kind", kind), ("outcome", outcome)]);
        CacheMemoryCounters {
            entry_hits: h("entry", "hit"),
            entry_misses: h("entry", "miss"),
            entry_stale: h("entry", "stale"),
            presented_hits: h("presented", "hit"),
            presented_misses: h("presented", "miss"),
            evicted: h("any", "evicted"),
        }
    }
}

/// One gauge sample taken at scrape time (pools, draining).
pub struct Gauge<'a> {
    pub name: &'a str,
    pub help: &'a str,
    pub labels: &'a [(&'a str, &'a str)],
    pub value: f64,
}

pub struct Metrics {
    registry: Registry,
    http_responses: Family,
    http_duration: Histogram,
    pub upstream_requests: Counter,
    pub upstream_failures: Counter,
    pub tool_calls: Counter,
    pub cache_hits: Counter,
    pub cache_misses: Counter,
    pub cache_shadow_hits: Counter,
    /// Size-guard cuts of results entering a conversation (G1).
    pub guard_cuts: Counter,
    /// Bytes written as stored results (G3).
    pub stored_result_bytes: Counter,
    /// Tool-call record writes, and the statements that wrote them (group commit).
    pub record_writes: Counter,
    pub record_statements: Counter,
    /// K1: record writes tried again from the backlog (Postgres was out of reach).
    pub record_retries: Counter,
    /// K1: calls left running by a replica that died, closed as interrupted.
    pub records_interrupted: Counter,
    /// Quota decisions that fell back to per-process limits (Redis unreachable).
    pub quota_fallbacks: Counter,
    /// Result-store operations served in process because Redis was unreachable.
    pub kv_fallbacks: Counter,
    /// Agents taken from this replica's memory, and agent statements run
    /// (`call::agent_memory`).
    pub agent_memory_hits: Counter,
    pub agent_loads: Counter,
    rate_waits: Counter,
    rate_wait_seconds: Counter<f64, AtomicU64>,
    rate_wait_duration: Histogram,
    /// `outcome`, `kind`.
    pub tool_calls_by: Family,
    /// `kind` = pages | requests | items.
    pub walk: Family,
    /// `reason` = a `_stoppedBy` value.
    pub walk_stops: Family,
    /// `provider`, `reason`: every finished walk (`none` when it stopped for no reason).
    walk_outcomes: Family,
    /// `provider`: how long walks took.
    walk_duration: Histograms,
    /// `provider`, `status` (HTTP status class, or `error` for no response).
    pub upstream_by: Family,
    /// `table`: rows deleted by retention passes.
    pub retention_pruned: Family,
    /// `mode` = inline | pool: jobs proportional to a payload's size (`walk::cpu_jobs`).
    pub cpu_jobs: Family,
    /// `mode` = hybrid | lexical: `search_tools` queries by how they were ranked (D5).
    pub search_queries: Family,
    /// Tool vectors computed by the embedding model (once per tool text and model, D5).
    pub tool_vectors_computed: Counter,
    /// `search_tools` queries whose vector this replica kept for the org (D5).
    pub search_query_vectors_kept: Counter,
    /// The dataset cache's memory in this replica (`results::cache_memory`).
    pub cache_memory: CacheMemoryCounters,
    /// `outcome` = due | started | skipped | missed | interrupted: schedules' due times
    /// as this replica handled them (`automate::scheduler`).
    pub schedule_runs: Family,
    /// How late scheduled runs were recorded after their due time.
    schedule_lateness: Histogram,
    /// `outcome` = succeeded | retry | failed: webhook delivery attempts (`automate::delivery`).
    pub webhook_deliveries: Family,
    upstream_latency: Histograms,
    providers: ProviderLabels,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// A counter registered under `name` (without its `_total`, which the encoder adds).
fn counter(r: &mut Registry, name: &str, help: &str) -> Counter {
    let c = Counter::default();
    r.register(name, help, c.clone());
    c
}

fn family(r: &mut Registry, name: &str, help: &str) -> Family {
    let f = Family::default();
    r.register(name, help, f.0.clone());
    f
}

fn histograms(r: &mut Registry, name: &str, help: &str, new: fn() -> Histogram) -> Histograms {
    let f = Histograms::new_with_constructor(new);
    r.register(name, help, f.clone());
    f
}

impl Metrics {
    pub fn new() -> Self {
        let mut r = Registry::default();
        let http_responses = family(
            &mut r,
            "loopgate_http_responses",
            "HTTP responses by status class.",
        );
        for class in ["2xx", "3xx", "4xx", "5xx"] {
            http_responses.add(&[("class", class)], 0.0);
        }
        let http_duration = latency();
        r.register(
            "loopgate_http_duration_seconds",
            "Time spent answering HTTP requests.",
            http_duration.clone(),
        );
        let c = |r: &mut Registry, n: &str, h: &str| counter(r, n, h);
        let upstream_requests = c(
            &mut r,
            "loopgate_upstream_requests",
            "Requests sent to upstream APIs.",
        );
        let upstream_failures = c(
            &mut r,
            "loopgate_upstream_failures",
            "Upstream requests that failed.",
        );
        let tool_calls = c(&mut r, "loopgate_tool_calls", "Tool calls executed.");
        let cache_hits = c(
            &mut r,
            "loopgate_cache_hits",
            "Tool calls served from the dataset cache.",
        );
        let cache_misses = c(
            &mut r,
            "loopgate_cache_misses",
            "Cacheable tool calls not found in the dataset cache.",
        );
        let cache_shadow_hits = c(
            &mut r,
            "loopgate_cache_shadow_hits",
            "Calls in shadow mode that would have been served from the cache.",
        );
        let guard_cuts = c(
            &mut r,
            "loopgate_size_guard_cuts",
            "Results cut by the size guard before entering a conversation.",
        );
        let stored_result_bytes = c(
            &mut r,
            "loopgate_stored_result_bytes",
            "Bytes written as stored results (_resultId).",
        );
        let record_writes = c(
            &mut r,
            "loopgate_tool_call_record_writes",
            "Tool-call record writes (a running row, its end, or a call written once).",
        );
        let record_statements = c(
            &mut r,
            "loopgate_tool_call_record_statements",
            "Statements that wrote tool-call records (writes queued together share one).",
        );
        let record_retries = c(
            &mut r,
            "loopgate_tool_call_record_retries",
            "Tool-call record writes tried again from the backlog kept while Postgres was out of reach (K1).",
        );
        let records_interrupted = c(
            &mut r,
            "loopgate_tool_call_records_interrupted",
            "Calls left running by a replica that stopped, closed as interrupted by this one (K1).",
        );
        let tool_vectors_computed = c(
            &mut r,
            "loopgate_tool_vectors_computed",
            "Tool vectors computed by the embedding model for search (D5; once per tool text and model, then kept in Postgres).",
        );
        let search_query_vectors_kept = c(
            &mut r,
            "loopgate_search_query_vectors_kept",
            "search_tools queries asked again lately in their org: their vector was kept, no embedding ran (D5).",
        );
        let search_queries = family(
            &mut r,
            "loopgate_search_queries",
            "search_tools queries by ranking: hybrid (words and meaning) or lexical (no embedding model).",
        );
        let schedule_runs = family(
            &mut r,
            "loopgate_schedule_due_times",
            "Schedules' due times by what became of them: due, started, skipped (overlap), missed (catch_up), interrupted (replica lost mid-run).",
        );
        let schedule_lateness = long();
        r.register(
            "loopgate_schedule_lateness_seconds",
            "How late scheduled runs (skipped ones included) were recorded after their due times.",
            schedule_lateness.clone(),
        );
        let webhook_deliveries = family(
            &mut r,
            "loopgate_webhook_delivery_attempts",
            "Webhook delivery attempts by outcome: succeeded, retry (will be tried again), failed (given up).",
        );
        // every outcome a series from the start, so a rate over the first event is one
        for mode in ["hybrid", "lexical"] {
            search_queries.add(&[("mode", mode)], 0.0);
        }
        for outcome in ["due", "started", "skipped", "missed", "interrupted"] {
            schedule_runs.add(&[("outcome", outcome)], 0.0);
        }
        for outcome in ["succeeded", "retry", "failed"] {
            webhook_deliveries.add(&[("outcome", outcome)], 0.0);
        }
        let rate_waits = c(
            &mut r,
            "loopgate_rate_limit_waits",
            "Upstream requests that waited for a shared rate-limit permit.",
        );
        let rate_wait_seconds = Counter::<f64, AtomicU64>::default();
        r.register(
            "loopgate_rate_limit_wait_seconds",
            "Time upstream requests waited for shared rate-limit permits.",
            rate_wait_seconds.clone(),
        );
        let rate_wait_duration = long();
        r.register(
            "loopgate_rate_limit_wait_duration_seconds",
            "How long each upstream request that waited for a shared rate-limit permit waited.",
            rate_wait_duration.clone(),
        );
        let quota_fallbacks = c(&mut r, "loopgate_quota_fallbacks", "Quota decisions made per process because Redis was unreachable (limits divided by the replica count).");
        let kv_fallbacks = c(&mut r, "loopgate_result_store_fallbacks", "Stored-result, thread-mark and dataset-cache operations kept in process because Redis was unreachable.");
        let agent_memory_hits = c(&mut r, "loopgate_agent_memory_hits", "Tool calls, steps and workflow runs that took their agent (and thread) from this replica's memory, reading no agent statement.");
        let agent_loads = c(&mut r, "loopgate_agent_loads", "Agent statements run (an agent not remembered, or remembered at an older config epoch or past agent_memory_seconds).");
        let tool_calls_by = family(
            &mut r,
            "loopgate_tool_calls_by_outcome",
            "Tool calls by outcome and tool kind.",
        );
        let walk = family(
            &mut r,
            "loopgate_walk",
            "Walk pages, upstream requests and items, summed over tool calls.",
        );
        let walk_stops = family(
            &mut r,
            "loopgate_walk_stops",
            "Walks by the reason they stopped (_stoppedBy).",
        );
        let walk_outcomes = family(&mut r, "loopgate_walk_outcomes", "Finished walks by provider and the reason they stopped (_stoppedBy; none: no stop reason).");
        let walk_duration = histograms(
            &mut r,
            "loopgate_walk_duration_seconds",
            "How long walks took, by provider.",
            long,
        );
        let upstream_by = family(
            &mut r,
            "loopgate_upstream_responses",
            "Upstream requests by provider and HTTP status class.",
        );
        let retention_pruned = family(
            &mut r,
            "loopgate_retention_pruned_rows",
            "Rows deleted by retention passes, by table.",
        );
        let cpu_jobs = family(
            &mut r,
            "loopgate_cpu_jobs",
            "Jobs proportional to a payload's size, run in place (small) or on the blocking pool.",
        );
        let memory = family(&mut r, "loopgate_cache_memory", "Lookups of the dataset cache's memory in this replica (decoded entries, presented results) by outcome, and things evicted to stay within cache_memory_bytes.");
        let cache_memory = CacheMemoryCounters::new(&memory);
        let upstream_latency = histograms(
            &mut r,
            "loopgate_upstream_duration_seconds",
            "Upstream request latency by provider (rate-limit waits included).",
            latency,
        );
        Metrics {
            registry: r,
            http_responses,
            http_duration,
            upstream_requests,
            upstream_failures,
            tool_calls,
            cache_hits,
            cache_misses,
            cache_shadow_hits,
            guard_cuts,
            stored_result_bytes,
            record_writes,
            record_statements,
            record_retries,
            records_interrupted,
            quota_fallbacks,
            kv_fallbacks,
            agent_memory_hits,
            agent_loads,
            rate_waits,
            rate_wait_seconds,
            rate_wait_duration,
            tool_calls_by,
            walk,
            walk_stops,
            walk_outcomes,
            walk_duration,
            upstream_by,
            retention_pruned,
            cpu_jobs,
            search_queries,
            tool_vectors_computed,
            search_query_vectors_kept,
            cache_memory,
            schedule_runs,
            schedule_lateness,
            webhook_deliveries,
            upstream_latency,
            providers: ProviderLabels::default(),
        }
    }

    pub fn observe_http(&self, status: u16, micros: u64) {
        let class = match status {
            200..=299 => "2xx",
            300..=399 => "3xx",
            400..=499 => "4xx",
            _ => "5xx",
        };
        self.http_responses.inc(&[("class", class)]);
        self.http_duration.observe(micros as f64 / 1e6);
    }

    pub fn inc(counter: &Counter) {
        counter.inc();
    }

    pub fn add(counter: &Counter, n: u64) {
        counter.inc_by(n);
    }

    /// A scheduled run (or skipped one) recorded `late` after its due time.
    pub fn observe_schedule_lateness(&self, late: Duration) {
        self.schedule_lateness.observe(late.as_secs_f64());
    }

    /// A request waited `d` for a shared rate-limit permit.
    pub fn observe_rate_wait(&self, d: Duration) {
        self.rate_waits.inc();
        self.rate_wait_seconds.inc_by(d.as_secs_f64());
        self.rate_wait_duration.observe(d.as_secs_f64());
    }

    /// One upstream request to `provider`: its HTTP status (`None`: no response) and latency.
    pub fn observe_upstream(&self, provider: &str, status: Option<u16>, took: Duration) {
        let class = match status {
            Some(s) => format!("{}xx", s / 100),
            None => "error".to_string(),
        };
        let provider = self.providers.label(provider);
        self.upstream_by
            .inc(&[("provider", provider), ("status", &class)]);
        self.upstream_latency
            .get_or_create(&labels(&[("provider", provider)]))
            .observe(took.as_secs_f64());
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

    /// A finished walk against `provider`: why it stopped and how long it took.
    pub fn observe_walk_outcome(&self, provider: &str, stop: Option<&str>, took: Duration) {
        let provider = self.providers.label(provider);
        let reason = stop.unwrap_or("none");
        self.walk_outcomes
            .inc(&[("provider", provider), ("reason", reason)]);
        self.walk_duration
            .get_or_create(&labels(&[("provider", provider)]))
            .observe(took.as_secs_f64());
    }

    /// Renders the OpenMetrics text format, with `gauges` sampled by the caller (pool
    /// sizes, draining) added before its `# EOF`.
    pub fn render_with(&self, gauges: &[Gauge<'_>]) -> String {
        let mut out = self.render();
        if out.ends_with("# EOF\n") {
            out.truncate(out.len() - "# EOF\n".len());
        }
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
        out.push_str("# EOF\n");
        out
    }

    /// Renders the OpenMetrics text format (ending `# EOF`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "metrics not rendered");
        }
        out
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn labelled_families_and_histograms_render_as_openmetrics_text() {
        let m = Metrics::default();
        m.tool_calls_by
            .inc(&[("outcome", "succeeded"), ("kind", "api")]);
        m.tool_calls_by
            .inc(&[("outcome", "succeeded"), ("kind", "api")]);
        m.observe_upstream("prv_1", Some(503), Duration::from_millis(30));
        m.observe_walk(3, 4, 250, Some("end"));
        Metrics::inc(&m.cache_memory.entry_hits);
        m.observe_http(204, 1500);
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
        assert!(
            text.contains(
                "loopgate_upstream_duration_seconds_bucket{le=\"0.025\",provider=\"prv_1\"} 0"
            ) || text.contains(
                "loopgate_upstream_duration_seconds_bucket{provider=\"prv_1\",le=\"0.025\"} 0"
            ),
            "{text}"
        );
        assert!(text.contains("loopgate_walk_total{kind=\"items\"} 250"));
        assert!(text.contains("loopgate_walk_stops_total{reason=\"end\"} 1"));
        assert!(text.contains("loopgate_cache_memory_total{kind=\"entry\",outcome=\"hit\"} 1"));
        assert!(text.contains("loopgate_http_responses_total{class=\"2xx\"} 1"));
        assert!(text.contains("loopgate_http_responses_total{class=\"5xx\"} 0"));
        assert!(
            text.contains("loopgate_http_duration_seconds_count 1"),
            "{text}"
        );
        assert!(
            text.contains("loopgate_http_duration_seconds_sum 0.0015"),
            "{text}"
        );
        assert!(text.contains("loopgate_pool_connections{pool=\"postgres\",state=\"in_use\"} 2"));
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(text.matches("# EOF").count(), 1);
    }

    #[test]
    fn providers_past_the_cap_share_one_series() {
        let m = Metrics::default();
        for i in 0..PROVIDER_SERIES + 5 {
            m.observe_upstream(&format!("prv_{i}"), Some(200), Duration::from_millis(1));
        }
        m.observe_walk_outcome("prv_0", Some("end"), Duration::from_millis(5));
        m.observe_walk_outcome(
            &format!("prv_{}", PROVIDER_SERIES + 9),
            None,
            Duration::ZERO,
        );
        let text = m.render();
        let series = text
            .lines()
            .filter(|l| l.starts_with("loopgate_upstream_responses_total{"))
            .count();
        assert_eq!(series, PROVIDER_SERIES + 1, "the cap and one `other`");
        assert!(
            text.contains("loopgate_upstream_responses_total{provider=\"other\",status=\"2xx\"} 5")
        );
        assert!(text.contains("loopgate_walk_outcomes_total{provider=\"prv_0\",reason=\"end\"} 1"));
        assert!(text.contains("loopgate_walk_outcomes_total{provider=\"other\",reason=\"none\"} 1"));
        assert!(text.contains("loopgate_walk_duration_seconds_count{provider=\"prv_0\"} 1"));
    }
}
