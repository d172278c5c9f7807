//! What a finished run tells the org's webhook endpoints (W7): its event type and the
//! message body, queued once per endpoint that subscribes to it. The delivery worker
//! (`automate::delivery`) sends, signs and retries it.
//!
//! A run that succeeded on data that is not complete (some step's `_loop.complete` is
//! false, e.g. a walk stopped by a bound) is `workflow_run.partial`, never passed off as
//! `succeeded`; a failed or interrupted run is `workflow_run.failed`; a skipped or
//! still running one tells nothing.

use serde_json::{json, Value};
use sqlx::PgPool;

use crate::store::webhooks;
use crate::store::workflow_runs::WorkflowRun;
use crate::store::{OrgId, StoreError};

pub const SUCCEEDED: &str = "workflow_run.succeeded";
pub const PARTIAL: &str = "workflow_run.partial";
pub const FAILED: &str = "workflow_run.failed";
/// Every event, in the order the API lists them.
pub const EVENTS: [&str; 3] = [SUCCEEDED, PARTIAL, FAILED];

/// Whether some step's verdict says its data is not complete.
fn any_incomplete(steps: &Value) -> bool {
    steps.as_object().is_some_and(|m| {
        m.values()
            .any(|out| out.pointer("/_loop/complete") == Some(&Value::Bool(false)))
    })
}

/// The run's event; `None` for a run that is not finished (or was skipped).
pub fn event_type(run: &WorkflowRun) -> Option<&'static str> {
    match run.status.as_str() {
        "succeeded" if any_incomplete(&run.steps.0) => Some(PARTIAL),
        "succeeded" => Some(SUCCEEDED),
        "failed" | "interrupted" => Some(FAILED),
        _ => None,
    }
}

/// The Standard Webhooks body: `{type, timestamp, data: <the run record>}`.
pub fn body(event: &str, run: &WorkflowRun) -> String {
    let at = run.finished_at.unwrap_or(run.started_at);
    json!({"type": event, "timestamp": at, "data": run}).to_string()
}

/// Queues the finished run for every subscribed endpoint; how many were queued.
pub async fn announce(pool: &PgPool, org: &OrgId, run: &WorkflowRun) -> Result<u64, StoreError> {
    let Some(event) = event_type(run) else {
        return Ok(0);
    };
    webhooks::enqueue(pool, org, &run.id, event, &body(event, run)).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sqlx::types::Json;

    fn run(status: &str, steps: Value) -> WorkflowRun {
        WorkflowRun {
            id: "run_1".into(),
            workflow_id: "wf_1".into(),
            status: status.into(),
            trigger: "schedule".into(),
            schedule_id: Some("sch_1".into()),
            scheduled_for: None,
            input: Json(json!({})),
            experiment: false,
            steps: Json(steps),
            started_at: chrono::Utc::now(),
            finished_at: None,
        }
    }

    #[test]
    fn a_capped_walk_is_partial_never_succeeded_w7() {
        let whole = json!({"a": {"_loop": {"complete": true}}, "b": {"_skipped": true}});
        let capped =
            json!({"a": {"_loop": {"complete": true}}, "b": {"_loop": {"complete": false}}});
        assert_eq!(event_type(&run("succeeded", whole)), Some(SUCCEEDED));
        assert_eq!(event_type(&run("succeeded", capped.clone())), Some(PARTIAL));
        assert_eq!(event_type(&run("failed", capped)), Some(FAILED));
        assert_eq!(event_type(&run("interrupted", json!({}))), Some(FAILED));
        assert_eq!(event_type(&run("skipped", json!({}))), None);
        assert_eq!(event_type(&run("running", json!({}))), None);
        // no steps at all: nothing is incomplete
        assert_eq!(event_type(&run("succeeded", json!({}))), Some(SUCCEEDED));
    }

    #[test]
    fn the_body_carries_type_timestamp_and_the_record_w7() {
        let r = run("succeeded", json!({}));
        let b: Value = serde_json::from_str(&body(SUCCEEDED, &r)).unwrap();
        assert_eq!(b["type"], SUCCEEDED);
        assert_eq!(b["data"]["id"], "run_1");
        assert_eq!(b["data"]["schedule_id"], "sch_1");
        assert!(b["timestamp"].as_str().unwrap().contains('T'));
    }
}
