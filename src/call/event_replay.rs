//! A finished tool call or workflow run told as its UI-message stream from its Postgres
//! record, for followers (`GET …/events`) that arrive after the live chunks expired or
//! were lost: the outcome at once. `None` while the record says `running`.

use serde_json::Value;
use sqlx::PgPool;

use crate::call::call_records::Records;
use crate::call::event_feed::Finished;
use crate::call::ui_stream;
use crate::call::RuntimeError;
use crate::store::{workflow_runs, workflows, OrgId};

/// `code: detail` of a recorded problem (`{code, detail}`), as `tool-output-error` says it.
fn problem_text(p: &Value) -> String {
    let code = p.get("code").and_then(Value::as_str).unwrap_or("error");
    let detail = p.get("detail").and_then(Value::as_str).unwrap_or("");
    format!("{code}: {detail}")
}

/// A call's record is read as `GET /v1/tool-calls/{id}` reads it (K1: also while it is
/// written behind its answer, `call_records::Records::read`).
pub async fn call(
    pool: &PgPool,
    records: &Records,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<Option<Finished>, RuntimeError> {
    let rec = records.read(pool, org, caller, id).await?;
    if rec.status == "running" {
        return Ok(None);
    }
    let error = rec.error.as_ref().map(|e| problem_text(&e.0));
    let result = rec.result.as_ref().map(|r| &r.0);
    let output = match (result, &error) {
        (Some(r), _) => Ok(r),
        (None, Some(e)) => Err(e.as_str()),
        (None, None) => Err("internal_error: the call ended without a recorded outcome"),
    };
    let closing = ui_stream::call_closing(&rec.id, output).to_vec();
    let args = records.read_arguments(pool, org, caller, id).await?;
    let mut full = ui_stream::call_opening(&rec.id, &rec.name, &args).to_vec();
    full.extend(closing.iter().cloned());
    Ok(Some(Finished { full, closing }))
}

pub async fn run(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    workflow_id: &str,
    id: &str,
) -> Result<Option<Finished>, RuntimeError> {
    let run = workflow_runs::get(pool, org, caller, workflow_id, id).await?;
    if run.status == "running" {
        return Ok(None);
    }
    let definition = workflows::get(pool, org, workflow_id).await.ok();
    let tool_of = |step: &str| -> String {
        definition
            .as_ref()
            .and_then(|w| w.steps.0.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .find(|s| s.get("id").and_then(Value::as_str) == Some(step))
            .and_then(|s| s.get("tool").and_then(Value::as_str))
            .unwrap_or("")
            .to_string()
    };
    let mut full = vec![ui_stream::start()];
    if let Some(steps) = run.steps.0.as_object() {
        for (step, output) in steps {
            let call_id = format!("{}:{step}", run.id);
            full.push(ui_stream::start_step());
            // the resolved arguments are not recorded: the step's output is what counts
            full.push(ui_stream::tool_input(
                &call_id,
                &tool_of(step),
                &Value::Null,
            ));
            let text = output.get("_error").map(problem_text);
            full.push(ui_stream::tool_output(
                &call_id,
                match &text {
                    Some(t) => Err(t),
                    None => Ok(output),
                },
            ));
            full.push(ui_stream::finish_step());
        }
    }
    full.push(ui_stream::finish());
    Ok(Some(Finished {
        full,
        closing: vec![ui_stream::finish()],
    }))
}
