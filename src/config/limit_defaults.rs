//! Defaults of the `limit_*` settings, taken from [`Limits::default`] (the one place they
//! are written) and merged before the file and the environment.

use serde::Serialize;

use loopgate_engine::Limits;

/// Defaults of the `limit_*` settings, merged before the file and the environment.
#[derive(Serialize)]
pub(crate) struct LimitDefaults {
    limit_pages_per_collection: u32,
    limit_requests: u32,
    limit_items: usize,
    limit_bytes: usize,
    limit_wall_seconds: u64,
    limit_token_budget: usize,
    limit_for_each_values: usize,
    limit_for_each_raw_values: usize,
    limit_default_page_size: u32,
    limit_progress_interval_ms: u64,
    limit_retries: u32,
    limit_concurrency: usize,
    limit_fields: usize,
    limit_path_bytes: usize,
    limit_path_segments: usize,
    limit_filter_clauses: usize,
    limit_in_values: usize,
    limit_aggregate_paths: usize,
    limit_aggregate_groups: usize,
    limit_workflow_steps: usize,
}

/// Steps in one workflow unless configured.
pub(crate) const WORKFLOW_STEPS: usize = 50;

impl LimitDefaults {
    pub(crate) fn new() -> Self {
        let l = Limits::default();
        Self {
            limit_pages_per_collection: l.pages_per_collection,
            limit_requests: l.requests,
            limit_items: l.items,
            limit_bytes: l.bytes,
            limit_wall_seconds: l.wall.as_secs(),
            limit_token_budget: l.token_budget,
            limit_for_each_values: l.for_each_values,
            limit_for_each_raw_values: l.max_for_each_raw,
            limit_default_page_size: l.default_page_size,
            limit_progress_interval_ms: l.progress_interval.as_millis() as u64,
            limit_retries: l.retries,
            limit_concurrency: l.concurrency,
            limit_fields: l.max_fields,
            limit_path_bytes: l.max_path_bytes,
            limit_path_segments: l.max_path_segments,
            limit_filter_clauses: l.max_filter_clauses,
            limit_in_values: l.max_in_values,
            limit_aggregate_paths: l.aggregate_paths,
            limit_aggregate_groups: l.aggregate_groups,
            limit_workflow_steps: WORKFLOW_STEPS,
        }
    }
}
