//! What a finished run tells the org's webhook endpoints (W7): its event type and the
//! message body, queued once per endpoint that subscribes to it, in the transaction that
//! records the run's end. The delivery worker
//! (`automate::delivery`) sends, signs and retries it.
//!
//! A run that succeeded on data that is not complete (some step's `_loop.complete` is
//! false, e.g. a walk stopped by a bound) is `workflow_run.partial`, never passed off as
//! `succeeded`; a failed or interrupted run is `workflow_run.failed`; a skipped or
//! still running one tells nothing.

use serde_json::{json, Value};
use sqlx::{PgConnection, PgPool};

use crate::store::webhooks;
use crate::store::workflow_runs::{self, Interrupted, WorkflowRun};
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

/// A delivery body past this many bytes leaves the steps' outputs out (the receiver
/// reads them from the run's record): one large walk must not make every endpoint of
/// the org receive, and the queue keep, megabytes per run.
pub const BODY_MAX_BYTES: usize = 256 * 1024;

/// The Standard Webhooks body: `{type, timestamp, data: <the run record>}`; past
/// [`BODY_MAX_BYTES`], the record without `steps` and with `steps_omitted: true`.
pub fn body(event: &str, run: &WorkflowRun) -> String {
    let at = run.finished_at.unwrap_or(run.started_at);
    let whole = json!({"type": event, "timestamp": at, "data": run}).to_string();
    if whole.len() <= BODY_MAX_BYTES {
        return whole;
    }
    let mut data = json!(run);
    if let Some(d) = data.as_object_mut() {
        d.remove("steps");
        d.insert("steps_omitted".into(), Value::Bool(true));
    }
    json!({"type": event, "timestamp": at, "data": data}).to_string()
}

/// Queues the finished run for every subscribed endpoint, on the connection that
/// records its end; how many were queued.
async fn announce(
    conn: &mut PgConnection,
    org: &OrgId,
    run: &WorkflowRun,
) -> Result<u64, StoreError> {
    let Some(event) = event_type(run) else {
        return Ok(0);
    };
    webhooks::enqueue(conn, org, &run.id, event, &body(event, run)).await
}

/// Records the end of a run and queues its deliveries in one transaction: a run
/// recorded finished is always announced, and nothing is announced for a run whose
/// end was not recorded (its lease then runs out and [`close_expired`] announces it).
pub async fn finish(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    succeeded: bool,
    steps: &Value,
) -> Result<WorkflowRun, StoreError> {
    let mut tx = pool.begin().await?;
    let run = workflow_runs::finish(&mut tx, org, id, succeeded, steps).await?;
    announce(&mut tx, org, &run).await?;
    tx.commit().await?;
    Ok(run)
}

/// Closes up to `limit` runs whose replica stopped renewing their lease as
/// `interrupted`, queuing each one's deliveries in the same transaction.
pub async fn close_expired(pool: &PgPool, limit: i64) -> Result<Vec<Interrupted>, StoreError> {
    let mut tx = pool.begin().await?;
    let closed = workflow_runs::close_expired(&mut tx, limit).await?;
    for c in &closed {
        announce(&mut tx, &OrgId::trusted(c.org_id.clone()), &c.run).await?;
    }
    tx.commit().await?;
    Ok(closed)
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
        assert!(b["data"].get("steps_omitted").is_none());
    }

    #[test]
    fn a_body_past_the_bound_leaves_the_steps_out_w7() {
        let big =
            json!({"a": {"items": ["x".repeat(BODY_MAX_BYTES)], "_loop": {"complete": true}}});
        let r = run("succeeded", big);
        let text = body(SUCCEEDED, &r);
        assert!(text.len() < BODY_MAX_BYTES, "{}", text.len());
        let b: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(b["data"]["id"], "run_1");
        assert_eq!(b["data"]["steps_omitted"], true);
        assert!(b["data"].get("steps").is_none());
    }
}
