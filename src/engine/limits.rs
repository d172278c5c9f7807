//! Every bound the engine enforces, as plain values. Nothing in the engine has a hidden
//! limit: a walk, the size guard and the retrieval tools all read from here.

use std::time::Duration;

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
    /// G1: conversation budget for one result, in tokens (see `guard` for the rule;
    /// values below `guard::MIN_TOKEN_BUDGET` are raised to it).
    pub token_budget: usize,
    /// E2: distinct `_for_each` values accepted.
    pub for_each_values: usize,
    /// P2: page size asked for when the schema declares no maximum.
    pub default_page_size: u32,
    /// S1: minimum spacing of progress reports.
    pub progress_interval: Duration,
    /// P3: retries of one request after a transient failure.
    pub retries: u32,
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
        }
    }
}
