//! Server-Sent Events in the AI SDK UI-message-stream protocol (v1). A spawned task
//! runs the call and writes chunks into a channel; the response body reads it. If the
//! client leaves, chunks are dropped but the call still finishes and is recorded. The
//! chunks' shapes are `call::ui_stream`'s; progress arrives already throttled (S1: the
//! engine's walk is the one place that throttles).

use actix_web::{web, HttpResponse};
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;
use utoipa::ToSchema;

use crate::api::state::AppState;
use crate::auth::Caller;
use crate::call::accepted_call::CallStart;
use crate::call::ui_stream;
use loopgate_engine::{Progress, ProgressSink};

/// One `data:` event, with its log id when it has one (for `Last-Event-ID`).
pub fn event(id: Option<&str>, chunk: &Value) -> String {
    match id {
        Some(id) => format!("id: {id}\ndata: {chunk}\n\n"),
        None => format!("data: {chunk}\n\n"),
    }
}

pub const DONE: &str = "data: [DONE]\n\n";

/// The AI SDK UI-message stream (v1) as Server-Sent Events: one `data: <json>` event per
/// chunk — `start`, `start-step`, `tool-input-available`, `data-tool-loop-progress` (at most
/// one per 750 ms), `tool-output-available` or `tool-output-error`, `finish-step`, `finish`
/// — then `data: [DONE]`. Sent with `x-vercel-ai-ui-message-stream: v1`.
#[derive(ToSchema)]
#[schema(
    example = "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"start-step\"}\n\ndata: {\"type\":\"tool-input-available\",\"toolCallId\":\"call_1\",\"toolName\":\"list_orders\",\"input\":{\"_all_pages\":true}}\n\ndata: {\"type\":\"tool-output-available\",\"toolCallId\":\"call_1\",\"output\":{\"items\":[],\"_itemCount\":0,\"_pagingComplete\":true}}\n\ndata: {\"type\":\"finish-step\"}\n\ndata: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\ndata: [DONE]\n\n"
)]
pub struct UiMessageStream(pub String);

/// Forwards the engine's progress as `data-tool-loop-progress` chunks.
struct ChannelProgress {
    tx: mpsc::UnboundedSender<String>,
    call_id: String,
}

impl ProgressSink for ChannelProgress {
    fn progress(&self, p: &Progress) {
        // a gone client never holds the walk back
        let _ = self
            .tx
            .send(event(None, &ui_stream::progress(&self.call_id, p)));
    }
}

/// The streaming response reading `rx`.
pub fn response(mut rx: mpsc::UnboundedReceiver<String>) -> HttpResponse {
    streaming(futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|o| o.map(|s| Ok::<Bytes, actix_web::Error>(Bytes::from(s))))
    }))
}

/// A UI-message stream response (its protocol headers) over `body`.
pub fn streaming<S>(body: S) -> HttpResponse
where
    S: futures_util::Stream<Item = Result<Bytes, actix_web::Error>> + 'static,
{
    HttpResponse::Ok()
        .insert_header(("content-type", "text/event-stream"))
        .insert_header(("x-vercel-ai-ui-message-stream", "v1"))
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}

pub fn stream_call(state: web::Data<AppState>, caller: Caller, start: CallStart) -> HttpResponse {
    // unbounded: a call's chunks are bounded by the throttled progress of one walk
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let task = async move {
        for c in ui_stream::call_opening(&start.id, &start.input.name, &start.input.arguments) {
            let _ = tx.send(event(None, &c));
        }
        let sink = ChannelProgress {
            tx: tx.clone(),
            call_id: start.id.clone(),
        };
        let out = state.runtime.execute(&caller, &start, &sink).await;
        let closing = match &out {
            Ok(result) => ui_stream::call_closing_text(&start.id, Ok(result)),
            Err(e) => ui_stream::call_closing_text(&start.id, Err(&ui_stream::error_text(e))),
        };
        for c in closing {
            let _ = tx.send(format!("data: {c}\n\n"));
        }
        let _ = tx.send(DONE.to_string());
    };
    // the walk stays in the request's trace (its span is the parent)
    actix_web::rt::spawn(tracing::Instrument::in_current_span(task));
    response(rx)
}
