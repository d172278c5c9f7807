//! Operations endpoints: liveness, readiness (Postgres and Redis), Prometheus metrics.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use crate::api::state::AppState;
use crate::telemetry::metrics::Gauge;

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` (liveness); `ready`, or `degraded` when something runs degraded (readiness).
    pub status: &'static str,
    /// What runs degraded while ready, e.g. quotas enforced per process.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<String>,
}

/// Readiness notes that do not make the replica unready.
fn degradations(state: &AppState) -> Vec<String> {
    let mut notes = Vec::new();
    let backlog = state.runtime.records().backlog();
    if backlog.age >= crate::call::call_records::BACKLOG_NOTICE {
        notes.push(format!(
            "records: {} tool-call record writes ({} bytes) have waited {} s for Postgres; they \
             are written when it answers",
            backlog.rows,
            backlog.bytes,
            backlog.age.as_secs()
        ));
    }
    if state.quota.degraded() {
        notes.push(format!(
            "quotas: Redis was unreachable at the last decision, so rate and concurrency limits are \
             enforced per process at 1/{} of their configured values",
            state.quota.replicas()
        ));
    }
    if let Some(why) = state.runtime.semantic_unavailable() {
        notes.push(format!(
            "search: lexical only (BM25F), not by meaning: the embedding model is not loaded ({why})"
        ));
    }
    notes
}

/// The process is up.
///
/// Liveness only: answers `200` with `status: ok` while the process runs, without touching
/// Postgres or Redis (`GET /readyz` checks those).
#[utoipa::path(get, path = "/healthz", operation_id = "getHealth", tag = "operations",
    responses((status = 200, description = "The process is up", body = Health, example = json!({"status": "ok"}))))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok",
        detail: Vec::new(),
    })
}

/// Ready when Postgres answers.
///
/// Redis unreachable does not make the replica unready (tool calls keep working without
/// it): the answer is then `degraded`, with what runs degraded in `detail`.
#[utoipa::path(get, path = "/readyz", operation_id = "getReadiness", tag = "operations",
    responses((status = 200, description = "Postgres answers; `status` is `ready`, or `degraded` with `detail` when Redis does not answer", body = Health),
              (status = 503, description = "Postgres does not answer (`unavailable`)", body = super::error::Problem)))]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if state.runtime.walker().drain().is_draining() {
        return Err(ApiError::Unavailable {
            detail: "this replica is shutting down".into(),
            retry_after_secs: 1,
        });
    }
    let redis_ok = state.runtime.kv().probe().await;
    let mut detail = Vec::new();
    if !redis_ok {
        detail.push(
            "redis: not reachable; stored results and thread marks are kept on this replica only \
             and the dataset cache is per process until it answers"
                .to_string(),
        );
    }
    detail.extend(degradations(&state));
    let postgres = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        sqlx::query_scalar!("SELECT 1 AS ready").fetch_one(&state.pool),
    )
    .await;
    if !matches!(postgres, Ok(Ok(_))) {
        let mut text = "postgres is not reachable".to_string();
        for note in &detail {
            text.push_str("; ");
            text.push_str(note);
        }
        return Err(ApiError::Unavailable {
            detail: text,
            retry_after_secs: 5,
        });
    }
    Ok(HttpResponse::Ok().json(Health {
        status: if detail.is_empty() {
            "ready"
        } else {
            "degraded"
        },
        detail,
    }))
}

/// Prometheus metrics, in the OpenMetrics 1.0 text format (which Prometheus scrapes
/// natively).
///
/// No bearer token: scraped by Prometheus (request counts and latencies, walks and their
/// bounds, cache and delivery outcomes).
#[utoipa::path(get, path = "/metrics", operation_id = "getMetrics", tag = "operations",
    responses((status = 200, description = "OpenMetrics 1.0 text exposition", body = String, content_type = "application/openmetrics-text")))]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    let pg_size = f64::from(state.pool.size());
    let pg_idle = state.pool.num_idle() as f64;
    let pg_max = f64::from(state.pool.options().get_max_connections());
    // Redis is one shared multiplexed connection (kv::Redis), not a pool
    let samples = [
        ("postgres", "in_use", pg_size - pg_idle),
        ("postgres", "idle", pg_idle),
        ("postgres", "max", pg_max),
    ];
    let labels: Vec<[(&str, &str); 2]> = samples
        .iter()
        .map(|(pool, st, _)| [("pool", *pool), ("state", *st)])
        .collect();
    let mut gauges: Vec<Gauge<'_>> = samples
        .iter()
        .zip(&labels)
        .map(|((_, _, v), l)| Gauge {
            name: "loopgate_pool_connections",
            help: "Connection pool saturation: connections in use, idle, the maximum, and waiters.",
            labels: l,
            value: *v,
        })
        .collect();
    let backlog = state.runtime.records().backlog();
    gauges.push(Gauge {
        name: "loopgate_tool_call_record_backlog",
        help: "Tool-call record writes kept in this replica while Postgres is out of reach (K1).",
        labels: &[],
        value: backlog.rows as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_tool_call_record_backlog_seconds",
        help: "How long this replica has kept tool-call record writes for Postgres (K1).",
        labels: &[],
        value: backlog.age.as_secs_f64(),
    });
    gauges.push(Gauge {
        name: "loopgate_tool_call_record_journal_rows",
        help: "Tool-call record writes journaled and not yet in Postgres: written behind answers, queued or kept (K1).",
        labels: &[],
        value: backlog.journal_rows as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_tool_call_record_journal_bytes",
        help: "Bytes of this replica's record journal (K1; bounded like the backlog, a write that does not fit is refused).",
        labels: &[],
        value: backlog.journal_bytes as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_quota_degraded",
        help: "1 while quotas fall back to per-process limits (Redis unreachable).",
        labels: &[],
        value: if state.quota.degraded() { 1.0 } else { 0.0 },
    });
    gauges.push(Gauge {
        name: "loopgate_result_store_degraded",
        help:
            "1 while stored results and the dataset cache are kept in process (Redis unreachable).",
        labels: &[],
        value: if state.runtime.kv().degraded() {
            1.0
        } else {
            0.0
        },
    });
    gauges.push(Gauge {
        name: "loopgate_search_semantic",
        help: "1 when tool search ranks by meaning as well as words (the embedding model is loaded), 0 when lexical only.",
        labels: &[],
        value: if state.runtime.semantic_unavailable().is_none() { 1.0 } else { 0.0 },
    });
    gauges.push(Gauge {
        name: "loopgate_tool_vectors_waiting",
        help: "Tools of this replica whose search vectors are being computed in the background (D6); they rank by words until then.",
        labels: &[],
        value: state.runtime.tool_vectors_waiting() as f64,
    });
    let cpu = state.runtime.walker().cpu().stats();
    gauges.push(Gauge {
        name: "loopgate_cpu_jobs_running",
        help: "Jobs proportional to a payload's size running on the blocking pool.",
        labels: &[],
        value: cpu.running as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_cpu_jobs_waiting",
        help: "Such jobs waiting for their org's or this replica's share of the pool.",
        labels: &[],
        value: cpu.waiting as f64,
    });
    let (memory_bytes, memory_kept) = state.runtime.walker().cache_memory().usage();
    gauges.push(Gauge {
        name: "loopgate_cache_memory_bytes",
        help: "Bytes of decoded dataset-cache entries and results presented from them kept in this replica (at most cache_memory_bytes).",
        labels: &[],
        value: memory_bytes as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_cache_memory_entries",
        help: "Decoded dataset-cache entries and presented results kept in this replica.",
        labels: &[],
        value: memory_kept as f64,
    });
    gauges.push(Gauge {
        name: "loopgate_connection_refreshes_waiting",
        help: "Calls waiting in this replica for another call's refresh of the same connection.",
        labels: &[],
        value: state.runtime.refresh_gates().waiting() as f64,
    });
    // time per stage, when stage spans are on (`telemetry::stage_times`)
    let stages = crate::telemetry::stage_times::totals();
    let stage_labels: Vec<[(&str, &str); 1]> =
        stages.iter().map(|(s, _, _)| [("stage", *s)]).collect();
    for ((_, _, micros), labels) in stages.iter().zip(&stage_labels) {
        gauges.push(Gauge {
            name: "loopgate_stage_microseconds",
            help: "Wall time spent in each stage of calls since start (stage spans on: RUST_LOG=loopgate::stage=trace).",
            labels,
            value: *micros as f64,
        });
    }
    for ((_, spans, _), labels) in stages.iter().zip(&stage_labels) {
        gauges.push(Gauge {
            name: "loopgate_stage_spans",
            help:
                "Stage spans closed since start (stage spans on: RUST_LOG=loopgate::stage=trace).",
            labels,
            value: *spans as f64,
        });
    }
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(state.metrics.render_with(&gauges))
}
