//! A workflow run as Server-Sent Events in the AI SDK UI-message-stream protocol (v1),
//! one tool step per workflow step. A spawned task runs the workflow; the response body
//! reads its chunks. If the client leaves, chunks are dropped but the run still finishes
//! and is recorded.

use std::sync::Mutex;

use actix_web::{web, HttpResponse};
use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::runtime::chunk;
use crate::auth::Caller;
use crate::engine::Progress;
use crate::state::AppState;
use crate::workflow::{self, RunObserver, RunStart};

const PROGRESS_INTERVAL_MS: u64 = 750;

/// Writes the run's events as chunks. The channel is unbounded because a run's chunks
/// are bounded by its steps and the throttled progress; a gone client just drops them.
struct ChannelObserver {
    tx: mpsc::UnboundedSender<String>,
    /// (step call id, elapsed ms of its last progress chunk): S1 per step.
    last: Mutex<(String, u64)>,
}

impl ChannelObserver {
    fn send(&self, v: Value) {
        let _ = self.tx.send(chunk(v));
    }
}

impl RunObserver for ChannelObserver {
    fn step_started(&self, call_id: &str, tool: &str, input: &Value) {
        self.send(json!({"type": "start-step"}));
        self.send(
            json!({"type": "tool-input-available", "toolCallId": call_id, "toolName": tool, "input": input}),
        );
    }

    fn progress(&self, call_id: &str, p: &Progress) {
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.0 == call_id && p.elapsed_ms < last.1 + PROGRESS_INTERVAL_MS {
            return;
        }
        *last = (call_id.to_string(), p.elapsed_ms);
        drop(last);
        self.send(json!({"type": "data-tool-loop-progress", "id": call_id, "data": p}));
    }

    fn step_finished(&self, call_id: &str, output: Result<&Value, &str>) {
        self.send(match output {
            Ok(o) => json!({"type": "tool-output-available", "toolCallId": call_id, "output": o}),
            Err(e) => json!({"type": "tool-output-error", "toolCallId": call_id, "errorText": e}),
        });
        self.send(json!({"type": "finish-step"}));
    }
}

pub fn stream_run(state: web::Data<AppState>, caller: Caller, start: RunStart) -> HttpResponse {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    actix_web::rt::spawn(async move {
        let _ = tx.send(chunk(json!({"type": "start"})));
        let observer = ChannelObserver {
            tx: tx.clone(),
            last: Mutex::new((String::new(), 0)),
        };
        if let Err(e) = workflow::execute(&state.runtime, &caller, &start, &observer).await {
            tracing::error!(error = %e, run = %start.run.id, "workflow run could not be recorded");
            let _ = tx.send(chunk(
                json!({"type": "error", "errorText": "the run could not be recorded"}),
            ));
        }
        let _ = tx.send(chunk(json!({"type": "finish", "finishReason": "stop"})));
        let _ = tx.send("data: [DONE]\n\n".to_string());
    });
    let body = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|o| o.map(|s| Ok::<Bytes, actix_web::Error>(Bytes::from(s))))
    });
    HttpResponse::Ok()
        .insert_header(("content-type", "text/event-stream"))
        .insert_header(("x-vercel-ai-ui-message-stream", "v1"))
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}
