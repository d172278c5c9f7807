//! Workflow runs (W1–W5): the steps of a workflow run in order against its
//! agent's tools with the caller's credentials, each step's arguments resolved from the
//! run document `{"input", "steps"}`. No HTTP types: the API layer passes an observer
//! (the SSE stream) and maps errors.
//!
//! Decisions: a step that declares `loop` is parsed as a looping call whatever its
//! binding's `loop_responses` says (the workflow author opted in explicitly); a step
//! without `loop` is a plain call. A step's cache (W4) follows the deployment's mode,
//! and only when the step sets `loop.cache.ttl_minutes`. The cache holds the tool-call
//! envelope (same entries and keys as tool calls) together with the tool's own payload
//! shape, so a step served from it has the same shape as a walked one (rows under the
//! tool's own key), labelled with `_cache`. Every step's output carries `_loop`.

pub mod announce;
pub mod refs;
pub mod step;

use serde_json::{json, Map, Value};

use crate::auth::Caller;
use crate::call::event_feed::Feed;
use crate::call::event_log;
use crate::call::ui_stream;
use crate::call::workflow_tool::{RunOptions, StepArguments};
use crate::call::{AgentView, Runtime, RuntimeError};
use crate::crypto::new_id;
use crate::store::workflow_runs::{self, NewRun, WorkflowRun};
use crate::store::workflows::{self, Workflow};
use crate::store::StoreError;
use crate::walk::drain::InFlight;
use loopgate_engine::{Progress, ProgressSink};
use step::Step;

/// What a run reports while it goes; every method has a silent default.
pub trait RunObserver: Send + Sync {
    /// A step starts with these resolved arguments; `call_id` is `<run id>:<step id>`.
    fn step_started(&self, _call_id: &str, _tool: &str, _input: &Value) {}
    fn progress(&self, _call_id: &str, _p: &Progress) {}
    /// `Ok(output)` (also for a skipped step) or `Err(error text)`.
    fn step_finished(&self, _call_id: &str, _output: Result<&Value, &str>) {}
}

/// An observer that reports nothing.
pub struct Silent;
impl RunObserver for Silent {}

struct StepProgress<'a> {
    observer: &'a dyn RunObserver,
    call_id: &'a str,
}

impl ProgressSink for StepProgress<'_> {
    fn progress(&self, p: &Progress) {
        self.observer.progress(self.call_id, p);
    }
}

/// The run's chunks into the event log (followers on any replica), and to `inner`.
struct FeedObserver<'a> {
    feed: &'a Feed,
    inner: &'a dyn RunObserver,
}

impl RunObserver for FeedObserver<'_> {
    fn step_started(&self, call_id: &str, tool: &str, input: &Value) {
        self.feed.push(ui_stream::start_step());
        self.feed.push(ui_stream::tool_input(call_id, tool, input));
        self.inner.step_started(call_id, tool, input);
    }
    fn progress(&self, call_id: &str, p: &Progress) {
        self.feed.push(ui_stream::progress(call_id, p));
        self.inner.progress(call_id, p);
    }
    fn step_finished(&self, call_id: &str, output: Result<&Value, &str>) {
        self.feed.push(ui_stream::tool_output(call_id, output));
        self.feed.push(ui_stream::finish_step());
        self.inner.step_finished(call_id, output);
    }
}

/// A run that has been accepted and recorded, ready to execute.
pub struct RunStart {
    pub run: WorkflowRun,
    pub workflow: Workflow,
    pub agent: std::sync::Arc<AgentView>,
    /// Keeps a draining replica up until the run has recorded its outcome.
    pub in_flight: InFlight,
}

/// Checks that the workflow is the caller's org's (else not found) and that the caller
/// may use its agent, then records the run as `running`.
pub async fn start(
    rt: &Runtime,
    caller: &Caller,
    workflow_id: &str,
    input: Value,
    experiment: bool,
) -> Result<RunStart, RuntimeError> {
    let in_flight = rt.walker().drain().enter().ok_or(RuntimeError::Draining)?;
    let workflow = workflows::get(rt.pool(), caller.org(), workflow_id)
        .await
        .map_err(|e| match e {
            StoreError::NotFound => RuntimeError::NotFound("workflow"),
            other => other.into(),
        })?;
    let agent = rt.agent(caller, &workflow.agent_id).await?;
    let id = new_id("run");
    let run = workflow_runs::start(
        rt.pool(),
        caller.org(),
        &NewRun {
            id: &id,
            workflow_id: &workflow.id,
            caller: &caller.thread_owner(),
            input: &input,
            experiment,
        },
    )
    .await?;
    Ok(RunStart {
        run,
        workflow,
        agent,
        in_flight,
    })
}

/// A run a schedule recorded (W6), ready to execute as `caller` (its `run_as` user or the
/// org): the same checks as [`start`] except that the record exists already.
pub async fn resume_recorded(
    rt: &Runtime,
    caller: &Caller,
    run: WorkflowRun,
) -> Result<RunStart, RuntimeError> {
    let in_flight = rt.walker().drain().enter().ok_or(RuntimeError::Draining)?;
    let workflow = workflows::get(rt.pool(), caller.org(), &run.workflow_id)
        .await
        .map_err(|e| match e {
            StoreError::NotFound => RuntimeError::NotFound("workflow"),
            other => other.into(),
        })?;
    let agent = rt.agent(caller, &workflow.agent_id).await?;
    Ok(RunStart {
        run,
        workflow,
        agent,
        in_flight,
    })
}

/// Runs every step in order; the first failing step fails the run and later steps do
/// not run. The outcome is recorded also when nobody listens any more.
pub async fn execute(
    rt: &Runtime,
    caller: &Caller,
    start: &RunStart,
    observer: &dyn RunObserver,
) -> Result<WorkflowRun, RuntimeError> {
    let feed = Feed::open(rt.events(), event_log::key(caller.org(), &start.run.id));
    feed.push(ui_stream::start());
    let tee = FeedObserver {
        feed: &feed,
        inner: observer,
    };
    let (succeeded, outputs) = run_steps(rt, caller, start, &tee).await;
    // every step's chunks are in the log before the record says the run finished: a
    // follower that reads the record first and the log after misses none of them
    feed.close().await;
    // W7: the deliveries are queued with the record of the end, sent by the delivery
    // workers; they never hold the run up
    let recorded =
        announce::finish(rt.pool(), caller.org(), &start.run.id, succeeded, &outputs).await;
    let key = event_log::key(caller.org(), &start.run.id);
    if let Err(e) = rt
        .events()
        .append_all(&key, &[ui_stream::finish().to_string()])
        .await
    {
        tracing::debug!(error = %e, "could not log the run's finish chunk");
    }
    Ok(recorded?)
}

/// The steps in order, to the first that fails: whether all succeeded, and each step's
/// output by id.
async fn run_steps(
    rt: &Runtime,
    caller: &Caller,
    start: &RunStart,
    observer: &dyn RunObserver,
) -> (bool, Value) {
    let mut doc = json!({"input": start.run.input.0, "steps": {}});
    let mut failed = false;
    let empty = Vec::new();
    let steps = start.workflow.steps.0.as_array().unwrap_or(&empty);
    for raw in steps {
        let step = Step::parse(raw);
        let call_id = format!("{}:{}", start.run.id, step.id);
        let output = run_step(rt, caller, start, &step, &call_id, &doc, observer).await;
        let output = match output {
            Ok(v) => {
                observer.step_finished(&call_id, Ok(&v));
                v
            }
            Err((code, detail)) => {
                observer.step_finished(&call_id, Err(&format!("{code}: {detail}")));
                failed = true;
                json!({"_error": {"code": code, "detail": detail}})
            }
        };
        if let Some(Value::Object(m)) = doc.get_mut("steps") {
            m.insert(step.id.to_string(), output);
        }
        if failed {
            break;
        }
    }
    let outputs = doc
        .get("steps")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    (!failed, outputs)
}

/// One step: its output, or the error `(code, detail)` that fails the run.
async fn run_step(
    rt: &Runtime,
    caller: &Caller,
    start: &RunStart,
    step: &Step<'_>,
    call_id: &str,
    doc: &Value,
    observer: &dyn RunObserver,
) -> Result<Value, (&'static str, String)> {
    let invalid = |e: refs::RefError| ("invalid_reference", e.0);
    // the condition first: a skipped step's refs may point at what did not happen
    if let Some(cond) = step.condition {
        let skip = refs::condition(step.id, cond, doc);
        if !matches!(skip, Ok(None)) {
            let raw = step.input.cloned().unwrap_or_else(|| json!({}));
            observer.step_started(call_id, step.tool, &raw);
            let reason = skip.map_err(invalid)?;
            return Ok(json!({"_skipped": true, "reason": reason}));
        }
    }
    let args = step.arguments(doc);
    let shown = match &args {
        Ok(a) => a.clone(),
        Err(_) => step.input.cloned().unwrap_or_else(|| json!({})),
    };
    observer.step_started(call_id, step.tool, &shown);
    let args = args.map_err(invalid)?;
    let read = step.referenced_values(doc).map_err(invalid)?;
    let opts = RunOptions {
        looping: step.looping.is_some(),
        experiment: start.run.experiment,
        cache_ttl: step.cache_ttl(),
    };
    let sink = StepProgress { observer, call_id };
    let run = rt
        .run_bound_tool(
            caller,
            &start.agent,
            step.tool,
            StepArguments { args, read },
            opts,
            &sink,
        )
        .await
        .map_err(|e| {
            let (code, _) = e.code_status();
            (code, format!("step '{}': {e}", step.id))
        })?;
    // W2 shaping is proportional to the rows: off the async workers when large
    let size = crate::walk::run_tool::outcome_bytes(&run.outcome);
    Ok(rt
        .walker()
        .cpu()
        .run(caller.org(), size, move || step::output(&run))
        .await)
}
