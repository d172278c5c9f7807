//! Server-Sent Events in the AI SDK UI-message-stream protocol (v1). A spawned task
//! runs the call and writes chunks into a bounded channel; the response body reads
//! it. If the client leaves, chunks are dropped but the call still finishes and is
//! recorded.

use actix_web::{web, HttpResponse};
use bytes::Bytes;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;
use utoipa::ToSchema;

use super::runtime::{chunk, error_text, start_chunks};
use crate::auth::Caller;
use crate::engine::{Progress, ProgressSink};
use crate::runtime::call::CallStart;
use crate::state::AppState;

/// Forwards the engine's (already throttled) progress as `data-tool-loop-progress` chunks.
/// Also enforces S1 here (at most one chunk per 750 ms of walk time), whatever the
/// engine sends.
struct ChannelProgress {
    tx: mpsc::Sender<String>,
    call_id: String,
    last_ms: AtomicU64,
}

/// The AI SDK UI-message stream (v1) as Server-Sent Events: one `data: <json>` event per
/// chunk — `start`, `start-step`, `tool-input-available`, `data-tool-loop-progress` (at most
/// one per 750 ms), `tool-output-available` or `tool-output-error`, `finish-step`, `finish`
/// — then `data: [DONE]`. Sent with `x-vercel-ai-ui-message-stream: v1`.
#[derive(ToSchema)]
#[schema(
    example = "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"start-step\"}\n\ndata: {\"type\":\"tool-input-available\",\"toolCallId\":\"call_1\",\"toolName\":\"list_orders\",\"input\":{\"_all_pages\":true}}\n\ndata: {\"type\":\"tool-output-available\",\"toolCallId\":\"call_1\",\"output\":{\"items\":[],\"_itemCount\":0,\"_pagingComplete\":true}}\n\ndata: {\"type\":\"finish-step\"}\n\ndata: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\ndata: [DONE]\n\n"
)]
pub struct UiMessageStream(pub String);

const PROGRESS_INTERVAL_MS: u64 = 750;

impl ProgressSink for ChannelProgress {
    fn progress(&self, p: &Progress) {
        let last = self.last_ms.load(Ordering::Relaxed);
        if last != u64::MAX && p.elapsed_ms < last + PROGRESS_INTERVAL_MS {
            return;
        }
        self.last_ms.store(p.elapsed_ms, Ordering::Relaxed);
        let c = chunk(json!({"type": "data-tool-loop-progress", "id": self.call_id, "data": p}));
        // a slow or gone client never holds the walk back
        let _ = self.tx.try_send(c);
    }
}

pub fn stream_call(state: web::Data<AppState>, caller: Caller, start: CallStart) -> HttpResponse {
    let (tx, mut rx) = mpsc::channel::<String>(256);
    actix_web::rt::spawn(async move {
        for c in start_chunks(&start.id, &start.input.name, &start.input.arguments) {
            let _ = tx.send(c).await;
        }
        let sink = ChannelProgress {
            tx: tx.clone(),
            call_id: start.id.clone(),
            last_ms: AtomicU64::new(u64::MAX),
        };
        let out = state.runtime.execute(&caller, &start, &sink).await;
        let end = match out {
            Ok(result) => {
                json!({"type": "tool-output-available", "toolCallId": start.id, "output": result})
            }
            Err(e) => {
                json!({"type": "tool-output-error", "toolCallId": start.id, "errorText": error_text(&e)})
            }
        };
        for c in [
            chunk(end),
            chunk(json!({"type": "finish-step"})),
            chunk(json!({"type": "finish", "finishReason": "stop"})),
            "data: [DONE]\n\n".to_string(),
        ] {
            let _ = tx.send(c).await;
        }
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
