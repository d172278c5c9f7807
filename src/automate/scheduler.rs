//! The scheduler (W6): every replica ticks; each tick closes runs whose lease ran out
//! (`interrupted`) and claims due schedules in one Postgres transaction (`FOR UPDATE
//! SKIP LOCKED`), records the run of each due time under the unique run key
//! `(schedule_id, scheduled_for)`, moves the schedule's `next_due_at` past now and
//! commits; only then are the recorded runs executed, each renewing its lease while it
//! goes. A replica that dies mid-run leaves a run that the next tick anywhere closes as
//! `interrupted`: nothing runs a due time twice.
//!
//! Due times found together (an outage, a paused replica set) follow `catch_up`:
//! `latest` runs the latest of them, `none` runs it only when it is at most `grace`
//! late; the others are missed (counted, not recorded). A due time that falls while the
//! schedule's previous run still goes follows `overlap`: `skip` records it as a run with
//! status `skipped`, `allow` runs it beside the other.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;

use super::cron::Spec;
use super::HasRuntime;
use crate::auth::{Caller, KeyCaller, RuntimeCaller};
use crate::call::Runtime;
use crate::crypto::new_id;
use crate::store::api_keys::Scope;
use crate::store::schedules::{self, Schedule};
use crate::store::workflow_runs::{self, NewScheduledRun, WorkflowRun};
use crate::store::{OrgId, StoreError};
use crate::workflow::{self, announce, Silent};

/// Due times walked one by one when a schedule is behind (more: the latest is found
/// by searching back from now).
const BEHIND_CAP: usize = 1000;
/// Schedules claimed per tick, and expired runs closed per tick.
const BATCH: i64 = 50;

#[derive(Debug, Clone)]
pub struct Config {
    pub tick: Duration,
    pub lease: Duration,
    pub grace: Duration,
}

/// Where a scheduled run's `caller` column points: its `run_as` user, else the schedule.
pub fn run_caller(s: &Schedule) -> String {
    match &s.run_as_user {
        Some(u) => format!("user:{u}"),
        None => format!("schedule:{}", s.id),
    }
}

/// Who a scheduled run acts as: the `run_as` user (their connections; a runtime token's
/// credentials are not stored, so a provider needing a user's own credential answers
/// `credential_required`), else the org itself (its provider credentials).
fn acting_caller(org: &OrgId, schedule_id: &str, run_as: Option<&str>) -> Caller {
    match run_as {
        Some(user) => Caller::Runtime(RuntimeCaller {
            org: org.clone(),
            user_id: user.to_string(),
            agent_id: None,
            cache_scope: None,
            credentials: HashMap::new(),
            token_id: format!("schedule:{schedule_id}"),
            minted_by: format!("schedule:{schedule_id}"),
            expires_at: DateTime::<Utc>::MAX_UTC,
        }),
        None => Caller::Key(KeyCaller {
            org: org.clone(),
            key_id: format!("schedule:{schedule_id}"),
            scopes: vec![Scope::Runtime],
        }),
    }
}

/// A run recorded by a tick, to execute after the commit.
struct Due {
    org: OrgId,
    run_as: Option<String>,
    run: WorkflowRun,
}

/// Ticks for as long as the process lives (stops claiming once draining). Runs on a
/// thread-local task set (the caller's: `app::startup` gives it an arbiter of its own),
/// and each recorded run executes as a local task of it, as a run of the API does.
pub async fn run(holder: Arc<dyn HasRuntime>, cfg: Config) {
    let mut tick = tokio::time::interval(cfg.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let rt = holder.runtime();
        if rt.walker().drain().is_draining() {
            return;
        }
        match tick_once(rt, &cfg).await {
            Ok(due) => {
                for d in due {
                    tokio::task::spawn_local(execute(holder.clone(), cfg.clone(), d));
                }
            }
            Err(e) => tracing::warn!(error = %e, "scheduler tick failed"),
        }
    }
}

/// Closes expired runs, then claims and records due times; the runs to execute.
async fn tick_once(rt: &Runtime, cfg: &Config) -> Result<Vec<Due>, StoreError> {
    let metrics = rt.walker().metrics().clone();
    for closed in announce::close_expired(rt.pool(), BATCH).await? {
        metrics.schedule_runs.inc(&[("outcome", "interrupted")]);
        tracing::warn!(run = %closed.run.id, "scheduled run interrupted: its replica stopped");
    }
    let mut tx = rt.pool().begin().await?;
    let now = schedules::db_now(&mut tx).await?;
    let claimed = schedules::claim_due(&mut tx, BATCH).await?;
    let mut out = Vec::new();
    for s in claimed {
        let Some(first) = s.next_due_at else { continue };
        let spec = match Spec::parse(&s.cron, &s.timezone) {
            Ok(spec) => spec,
            Err(e) => {
                // written through the API it parsed; never spin on a row that does not
                tracing::warn!(schedule = %s.id, error = %e, "schedule cannot be evaluated");
                schedules::advance(&mut tx, &s.id, None).await?;
                continue;
            }
        };
        let (latest, behind) = match spec.latest_in(first, now, BEHIND_CAP) {
            Some((l, n)) => (l, n),
            None => (first, 0),
        };
        let found = behind + 1;
        metrics
            .schedule_runs
            .add(&[("outcome", "due")], found as f64);
        let late = (now - latest).to_std().unwrap_or_default();
        let take = s.catch_up == "latest" || late <= cfg.grace;
        let missed = if take { behind } else { found };
        if missed > 0 {
            metrics
                .schedule_runs
                .add(&[("outcome", "missed")], missed as f64);
        }
        if take {
            let org = OrgId::trusted(s.org_id.clone());
            let skipped = s.overlap == "skip"
                && workflow_runs::schedule_running(&mut tx, &org, &s.id).await?;
            let id = new_id("run");
            let caller = run_caller(&s);
            let new = NewScheduledRun {
                id: &id,
                workflow_id: &s.workflow_id,
                schedule_id: &s.id,
                scheduled_for: latest,
                caller: &caller,
                input: &s.input.0,
                skipped,
                lease_seconds: cfg.lease.as_secs_f64(),
            };
            if let Some(run) = workflow_runs::insert_scheduled(&mut tx, &org, &new).await? {
                metrics.observe_schedule_lateness(late);
                if skipped {
                    metrics.schedule_runs.inc(&[("outcome", "skipped")]);
                } else {
                    metrics.schedule_runs.inc(&[("outcome", "started")]);
                    out.push(Due {
                        org,
                        run_as: s.run_as_user.clone(),
                        run,
                    });
                }
            }
        }
        schedules::advance(&mut tx, &s.id, spec.next_after(latest.max(now))).await?;
    }
    tx.commit().await?;
    Ok(out)
}

/// Executes a recorded run, renewing its lease until it has recorded its outcome.
async fn execute(holder: Arc<dyn HasRuntime>, cfg: Config, due: Due) {
    let rt = holder.runtime();
    let Due { org, run_as, run } = due;
    let schedule_id = run.schedule_id.clone().unwrap_or_default();
    let caller = acting_caller(&org, &schedule_id, run_as.as_deref());
    let run_id = run.id.clone();
    let work = async {
        match workflow::resume_recorded(rt, &caller, run).await {
            Ok(start) => {
                if let Err(e) = workflow::execute(rt, &caller, &start, &Silent).await {
                    tracing::warn!(run = %run_id, error = %e, "scheduled run not recorded");
                }
            }
            Err(e) => {
                // the workflow's agent is gone, or this replica is draining: the run is
                // recorded failed with the reason, and announced like any failed run
                let (code, _) = e.code_status();
                let steps = json!({"_run": {"_error": {"code": code, "detail": e.to_string()}}});
                if let Err(e) = announce::finish(rt.pool(), &org, &run_id, false, &steps).await {
                    tracing::warn!(run = %run_id, error = %e, "scheduled run not recorded")
                }
            }
        }
    };
    let renew = renew_lease(rt, org.clone(), run_id.clone(), cfg.lease);
    tokio::select! {
        _ = work => {}
        _ = renew => {}
    }
}

/// Renews a run's lease every third of it; ends only when the run is no longer running.
async fn renew_lease(rt: &Runtime, org: OrgId, run_id: String, lease: Duration) {
    let mut every = tokio::time::interval(lease / 3);
    every.tick().await;
    loop {
        every.tick().await;
        match workflow_runs::renew_lease(rt.pool(), &org, &run_id, lease.as_secs_f64()).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => tracing::warn!(run = %run_id, error = %e, "could not renew a run's lease"),
        }
    }
    // closed meanwhile (interrupted): the run's own task decides when it ends
    std::future::pending::<()>().await;
}
