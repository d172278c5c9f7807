//! The engine's bounds and budgets as configured: the `limit_*` settings' accepted
//! ranges and the [`Limits`] a replica runs with (their defaults: [`super::limit_defaults`]). A value out of range stops
//! startup with one line naming the setting by its environment variable.

use std::time::Duration;

use crate::config::settings::Settings;
use anyhow::bail;
use loopgate_engine::Limits;

/// The smallest and largest per-agent `token_budget` (the size guard's, G1).
pub const AGENT_TOKEN_BUDGET: (i32, i32) = (1_000, 1_000_000);

impl Settings {
    /// `(setting, value, min, max)` of every bound.
    fn limit_ranges(&self) -> [(&'static str, u64, u64, u64); 20] {
        let n = |v: usize| v as u64;
        [
            (
                "limit_pages_per_collection",
                self.limit_pages_per_collection.into(),
                1,
                10_000,
            ),
            ("limit_requests", self.limit_requests.into(), 1, 100_000),
            ("limit_items", n(self.limit_items), 1, 10_000_000),
            ("limit_bytes", n(self.limit_bytes), 1024, 4 << 30),
            ("limit_wall_seconds", self.limit_wall_seconds, 1, 86_400),
            (
                "limit_token_budget",
                n(self.limit_token_budget),
                AGENT_TOKEN_BUDGET.0 as u64,
                AGENT_TOKEN_BUDGET.1 as u64,
            ),
            (
                "limit_for_each_values",
                n(self.limit_for_each_values),
                1,
                100_000,
            ),
            (
                "limit_for_each_raw_values",
                n(self.limit_for_each_raw_values),
                1,
                1_000_000,
            ),
            (
                "limit_default_page_size",
                self.limit_default_page_size.into(),
                1,
                100_000,
            ),
            (
                "limit_progress_interval_ms",
                self.limit_progress_interval_ms,
                10,
                600_000,
            ),
            ("limit_retries", self.limit_retries.into(), 0, 100),
            // the same range as a provider's own `concurrency`
            ("limit_concurrency", n(self.limit_concurrency), 1, 32),
            ("limit_fields", n(self.limit_fields), 1, 10_000),
            ("limit_path_bytes", n(self.limit_path_bytes), 1, 65_536),
            ("limit_path_segments", n(self.limit_path_segments), 1, 1_024),
            (
                "limit_filter_clauses",
                n(self.limit_filter_clauses),
                1,
                10_000,
            ),
            ("limit_in_values", n(self.limit_in_values), 1, 1_000_000),
            (
                "limit_aggregate_paths",
                n(self.limit_aggregate_paths),
                1,
                10_000,
            ),
            (
                "limit_aggregate_groups",
                n(self.limit_aggregate_groups),
                1,
                1_000_000,
            ),
            (
                "limit_workflow_steps",
                n(self.limit_workflow_steps),
                1,
                10_000,
            ),
        ]
    }

    /// Every bound within its range, and the raw `_for_each` bound not below the distinct
    /// one; the error is one line naming each offending setting by its variable.
    pub(crate) fn validate_limits(&self) -> anyhow::Result<()> {
        let env = |name: &str| format!("LOOPGATE_{}", name.to_ascii_uppercase());
        let mut bad: Vec<String> = self
            .limit_ranges()
            .iter()
            .filter(|(_, v, min, max)| v < min || v > max)
            .map(|(name, v, min, max)| {
                format!("{} must be between {min} and {max} (it is {v})", env(name))
            })
            .collect();
        if self.limit_for_each_raw_values < self.limit_for_each_values {
            bad.push(format!(
                "{} must be at least {} ({})",
                env("limit_for_each_raw_values"),
                env("limit_for_each_values"),
                self.limit_for_each_values
            ));
        }
        if !bad.is_empty() {
            bail!("invalid configuration: {}", bad.join("; "));
        }
        Ok(())
    }

    /// The engine's bounds as configured.
    pub fn engine_limits(&self) -> Limits {
        Limits {
            pages_per_collection: self.limit_pages_per_collection,
            requests: self.limit_requests,
            items: self.limit_items,
            bytes: self.limit_bytes,
            wall: Duration::from_secs(self.limit_wall_seconds),
            token_budget: self.limit_token_budget,
            for_each_values: self.limit_for_each_values,
            default_page_size: self.limit_default_page_size,
            progress_interval: Duration::from_millis(self.limit_progress_interval_ms),
            retries: self.limit_retries,
            concurrency: self.limit_concurrency,
            max_fields: self.limit_fields,
            max_path_bytes: self.limit_path_bytes,
            max_path_segments: self.limit_path_segments,
            max_filter_clauses: self.limit_filter_clauses,
            max_in_values: self.limit_in_values,
            max_for_each_raw: self.limit_for_each_raw_values,
            aggregate_paths: self.limit_aggregate_paths,
            aggregate_groups: self.limit_aggregate_groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use figment::Jail;

    use super::*;

    /// `Settings::load` with exactly these `LOOPGATE_*` variables set.
    #[allow(clippy::result_large_err)] // figment's own error type, in a test
    fn with_env(vars: &[(&str, &str)], check: impl FnOnce(anyhow::Result<Settings>)) {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Jail::expect_with(move |jail| {
            for (k, v) in &vars {
                jail.set_env(k, v);
            }
            check(Settings::load());
            Ok(())
        });
    }

    #[test]
    fn defaults_are_the_engines() {
        with_env(&[], |s| {
            let s = s.unwrap();
            assert_eq!(s.engine_limits(), Limits::default());
            assert_eq!(s.limit_workflow_steps, 50);
            assert!(s.validate_limits().is_ok());
        });
    }

    #[test]
    fn every_bound_is_read_from_its_variable() {
        with_env(
            &[
                ("LOOPGATE_LIMIT_REQUESTS", "7"),
                ("LOOPGATE_LIMIT_WALL_SECONDS", "5"),
                ("LOOPGATE_LIMIT_IN_VALUES", "3"),
            ],
            |s| {
                let l = s.unwrap().engine_limits();
                assert_eq!(
                    (l.requests, l.wall, l.max_in_values),
                    (7, Duration::from_secs(5), 3)
                );
            },
        );
    }

    #[test]
    fn a_bad_value_is_one_line_naming_the_setting() {
        with_env(&[("LOOPGATE_LIMIT_REQUESTS", "0")], |s| {
            let e = s.unwrap().validate_limits().unwrap_err().to_string();
            assert!(
                e.contains("LOOPGATE_LIMIT_REQUESTS must be between 1 and 100000 (it is 0)"),
                "{e}"
            );
            assert!(!e.contains('\n'));
        });
        with_env(&[("LOOPGATE_LIMIT_CONCURRENCY", "33")], |s| {
            let e = s.unwrap().validate_limits().unwrap_err().to_string();
            assert!(
                e.contains("LOOPGATE_LIMIT_CONCURRENCY must be between 1 and 32"),
                "{e}"
            );
        });
        with_env(&[("LOOPGATE_LIMIT_ITEMS", "many")], |s| {
            let e = s.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                e.contains("LOOPGATE_LIMIT_ITEMS") && !e.contains('\n'),
                "{e}"
            );
        });
        with_env(&[("LOOPGATE_LIMIT_FOR_EACH_RAW_VALUES", "10")], |s| {
            let e = s.unwrap().validate_limits().unwrap_err().to_string();
            assert!(
                e.contains("LOOPGATE_LIMIT_FOR_EACH_RAW_VALUES must be at least"),
                "{e}"
            );
        });
    }
}
