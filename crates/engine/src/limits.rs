//! Every bound the engine enforces, as plain values. Nothing in the engine has a hidden
//! limit: a walk, the size guard and the retrieval tools all read from here.

use std::time::Duration;

use crate::error::EngineError;

#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// P3: pages fetched per collection (per `_for_each` value).
    pub pages_per_collection: u32,
    /// P3: upstream requests per tool call, retries included.
    pub requests: u32,
    /// P3: merged rows; the walk stops at exactly this many.
    pub items: usize,
    /// P3: raw upstream bytes per tool call.
    pub bytes: usize,
    /// P3: wall clock per tool call.
    pub wall: Duration,
    /// G1: conversation budget for one result, in tokens (see `present::size_guard` for the rule;
    /// values below `present::size_guard::MIN_TOKEN_BUDGET` are raised to it).
    pub token_budget: usize,
    /// E2: distinct `_for_each` values accepted.
    pub for_each_values: usize,
    /// P2: page size asked for when the schema declares no maximum.
    pub default_page_size: u32,
    /// S1: minimum spacing of progress reports.
    pub progress_interval: Duration,
    /// P3: retries of one request after a transient failure.
    pub retries: u32,
    /// P9: upstream requests one walk keeps in flight at once where the API allows random
    /// access (page number or offset with a total or a last-page link) and across
    /// `_for_each` values; 1 walks
    /// strictly one request at a time. The provider's rate limit still spaces them.
    pub concurrency: usize,
    /// Argument bounds, each checked before any work proportional to what it bounds
    /// (parsing stays linear in the request): paths in `_fields` / `fields`.
    pub max_fields: usize,
    /// Bytes of one dot-path (`_fields`, `_filter`, `aggregate`).
    pub max_path_bytes: usize,
    /// Segments of one dot-path.
    pub max_path_segments: usize,
    /// Clauses in `_filter` / `filter`.
    pub max_filter_clauses: usize,
    /// Values of one `in` clause.
    pub max_in_values: usize,
    /// E2: raw `_for_each.values` accepted before de-duplication (the distinct ones are
    /// then held to `for_each_values`).
    pub max_for_each_raw: usize,
    /// Q1: paths one `aggregate` may name (over all its operations).
    pub aggregate_paths: usize,
    /// Q1: groups one `aggregate` answer shows (the largest first).
    pub aggregate_groups: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            pages_per_collection: 20,
            requests: 60,
            items: 5_000,
            bytes: 24 * 1024 * 1024,
            wall: Duration::from_secs(60),
            token_budget: 25_000,
            for_each_values: 50,
            default_page_size: 100,
            progress_interval: Duration::from_millis(750),
            retries: 3,
            concurrency: 4,
            max_fields: 100,
            max_path_bytes: 256,
            max_path_segments: 16,
            max_filter_clauses: 20,
            max_in_values: 200,
            max_for_each_raw: 500,
            aggregate_paths: 20,
            aggregate_groups: 100,
        }
    }
}

/// The error for a list or a path past its bound: names the argument and the limit, so
/// the caller knows what to send instead.
pub(crate) fn too_many(what: &str, got: usize, max: usize, unit: &str) -> EngineError {
    EngineError::LimitExceeded {
        detail: format!(
            "{what} has {got} {unit}; at most {max} are allowed. Send fewer (split the work over several calls if needed)."
        ),
    }
}
