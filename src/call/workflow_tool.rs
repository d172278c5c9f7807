//! One bound tool run by name outside a conversation (workflow steps, W): the same
//! credential, cache and walk code as a tool call, but the caller gets the engine's
//! `Outcome` and `CallPlan` to shape itself — no `_resultId`, no size guard (W3). A
//! fan-out by reference (E6) is walked to its last value within the step.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::auth::Caller;
use crate::call::{AgentView, Runtime, RuntimeError};
use crate::store::deployments::CacheMode;
use crate::walk::run_tool::CacheUse;
use std::sync::Arc;

use loopgate_engine::{CallPlan, Outcome, ProgressSink, Resolved, Resume, StopReason};

/// How to run the tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Parse the arguments as a looping call (reserved arguments allowed), whatever
    /// the binding's `loop_responses` says.
    pub looping: bool,
    /// Never read or write the cache.
    pub experiment: bool,
    /// Use the dataset cache (in the deployment's mode) with this TTL; `None`: no cache.
    pub cache_ttl: Option<Duration>,
}

/// A step's arguments for the tool, as the run resolved them.
pub struct StepArguments {
    pub args: Value,
    /// E6: the values `loop.for_each.values` names by reference (an earlier step's rows).
    pub read: Resolved,
}

pub struct BoundRun {
    /// Shared with this replica's memory of the cache entry on a hit.
    pub outcome: std::sync::Arc<Outcome>,
    pub plan: CallPlan,
    /// Served from the cache: (cached at, expires at).
    pub hit: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

impl Runtime {
    /// Runs the agent's bound tool `name` with `args` and the caller's credentials.
    pub async fn run_bound_tool<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        agent: &AgentView,
        name: &str,
        input: StepArguments,
        opts: RunOptions,
        progress: &P,
    ) -> Result<BoundRun, RuntimeError> {
        let Some(bound) = agent.tool(name) else {
            return Err(RuntimeError::UnknownTool(format!(
                "there is no tool named '{name}' bound to agent {}",
                agent.id
            )));
        };
        let mut plan = loopgate_engine::parse_call_resolved(
            &bound.analysis,
            &bound.tool.input_schema.0,
            input.args,
            opts.looping || bound.binding.loop_responses,
            self.walker.limits(),
            &input.read,
        )?;
        let cache = CacheUse {
            mode: match opts.cache_ttl {
                Some(_) => agent.cache_mode,
                None => CacheMode::Off,
            },
            experiment: opts.experiment,
            ttl: opts.cache_ttl,
            // a step stores no result whose writes could carry the version's confirmation
            confirm_later: false,
        };
        let fetched = self
            .fetch_credentialed(caller, bound, &plan, cache, progress)
            .await?;
        let (mut outcome, hit) = (fetched.outcome, fetched.hit);
        // E6: a fan-out by reference goes on within the step, its per-call share of values
        // at a time, each part under a fresh budget, until its values are done or another
        // bound stops it (at most `limits.items / for_each_values` parts)
        while let (Some(point), Some(StopReason::Values)) =
            (outcome.resume.clone(), outcome.verdict.stopped_by)
        {
            plan.resume = Some(Resume {
                point,
                rows_before: outcome.items.len(),
                errors_before: outcome.for_each_errors.clone(),
            });
            let part = CacheUse {
                mode: CacheMode::Off,
                ..cache
            };
            let next = self
                .fetch_credentialed(caller, bound, &plan, part, progress)
                .await?;
            let mut grown = Arc::unwrap_or_clone(outcome);
            let next = Arc::unwrap_or_clone(next.outcome);
            grown.items.extend(next.items);
            outcome = Arc::new(Outcome {
                items: grown.items,
                requests: grown.requests + next.requests,
                pages: grown.pages + next.pages,
                bytes: grown.bytes + next.bytes,
                ..next
            });
        }
        plan.resume = None;
        Ok(BoundRun { outcome, plan, hit })
    }
}
