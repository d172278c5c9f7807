//! A workflow run as Server-Sent Events in the AI SDK UI-message-stream protocol (v1),
//! one tool step per workflow step. A spawned task runs the workflow; the response body
//! reads its chunks. If the client leaves, chunks are dropped but the run still finishes
//! and is recorded. Chunk shapes are `call::ui_stream`'s; progress arrives throttled.

use actix_web::{web, HttpResponse};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::sse::{event, response, DONE};
use crate::api::state::AppState;
use crate::auth::Caller;
use crate::call::ui_stream;
use crate::workflow::{self, RunObserver, RunStart};
use loopgate_engine::Progress;

/// Writes the run's events as chunks. The channel is unbounded because a run's chunks
/// are bounded by its steps and the throttled progress; a gone client just drops them.
struct ChannelObserver {
    tx: mpsc::UnboundedSender<String>,
}

impl ChannelObserver {
    fn send(&self, v: Value) {
        let _ = self.tx.send(event(None, &v));
    }
}

impl RunObserver for ChannelObserver {
    fn step_started(&self, call_id: &str, tool: &str, input: &Value) {
        self.send(ui_stream::start_step());
        self.send(ui_stream::tool_input(call_id, tool, input));
    }

    fn progress(&self, call_id: &str, p: &Progress) {
        self.send(ui_stream::progress(call_id, p));
    }

    fn step_finished(&self, call_id: &str, output: Result<&Value, &str>) {
        self.send(ui_stream::tool_output(call_id, output));
        self.send(ui_stream::finish_step());
    }
}

pub fn stream_run(state: web::Data<AppState>, caller: Caller, start: RunStart) -> HttpResponse {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    actix_web::rt::spawn(async move {
        let _ = tx.send(event(None, &ui_stream::start()));
        let observer = ChannelObserver { tx: tx.clone() };
        if let Err(e) = workflow::execute(&state.runtime, &caller, &start, &observer).await {
            tracing::error!(error = %e, run = %start.run.id, "workflow run could not be recorded");
            let _ = tx.send(event(
                None,
                &json!({"type": "error", "errorText": "the run could not be recorded"}),
            ));
        }
        let _ = tx.send(event(None, &ui_stream::finish()));
        let _ = tx.send(DONE.to_string());
    });
    response(rx)
}
