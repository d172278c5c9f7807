//! The chunks of the AI SDK UI-message stream (v1) that tool calls and workflow runs
//! produce, as JSON values: one owner for their shapes, used by the live SSE responses,
//! the event log every replica reads (`GET …/events`) and the replay of a finished call.
//! Serialising them as Server-Sent Events is the API layer's job.

use serde_json::{json, Value};

use crate::call::{ResultJson, RuntimeError};
use loopgate_engine::Progress;

pub fn start() -> Value {
    json!({"type": "start"})
}

pub fn start_step() -> Value {
    json!({"type": "start-step"})
}

pub fn tool_input(call_id: &str, tool: &str, input: &Value) -> Value {
    json!({"type": "tool-input-available", "toolCallId": call_id, "toolName": tool, "input": input})
}

/// S1: one progress report (already throttled by the engine, the one owner of S1).
pub fn progress(call_id: &str, p: &Progress) -> Value {
    json!({"type": "data-tool-loop-progress", "id": call_id, "data": p})
}

/// `Ok(output)` or `Err(error text)`.
pub fn tool_output(call_id: &str, output: Result<&Value, &str>) -> Value {
    match output {
        Ok(o) => json!({"type": "tool-output-available", "toolCallId": call_id, "output": o}),
        Err(e) => json!({"type": "tool-output-error", "toolCallId": call_id, "errorText": e}),
    }
}

pub fn finish_step() -> Value {
    json!({"type": "finish-step"})
}

pub fn finish() -> Value {
    json!({"type": "finish", "finishReason": "stop"})
}

/// The chunk that ends a stream (`[DONE]` follows it on the wire).
pub fn is_finish(chunk: &Value) -> bool {
    chunk.get("type").and_then(Value::as_str) == Some("finish")
}

/// The `tool-output-error` text: the problem's detail, with its code.
pub fn error_text(e: &RuntimeError) -> String {
    format!("{}: {}", e.code_status().0, e)
}

/// A tool call's first chunks.
pub fn call_opening(call_id: &str, tool: &str, input: &Value) -> [Value; 3] {
    [start(), start_step(), tool_input(call_id, tool, input)]
}

/// A tool call's last chunks.
pub fn call_closing(call_id: &str, output: Result<&Value, &str>) -> [Value; 3] {
    [tool_output(call_id, output), finish_step(), finish()]
}

/// [`tool_output`] as JSON text, with a result's text put in as it is (never re-parsed).
pub fn tool_output_text(call_id: &str, output: Result<&ResultJson, &str>) -> String {
    match output {
        Ok(o) => format!(
            r#"{{"type":"tool-output-available","toolCallId":{},"output":{}}}"#,
            Value::from(call_id),
            o.as_str()
        ),
        Err(e) => tool_output(call_id, Err(e)).to_string(),
    }
}

/// [`call_closing`] as JSON text.
pub fn call_closing_text(call_id: &str, output: Result<&ResultJson, &str>) -> [String; 3] {
    [
        tool_output_text(call_id, output),
        finish_step().to_string(),
        finish().to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_text_is_the_output_chunk() {
        let r = ResultJson::from(json!({"items": [1], "_note": "a \"b\""}));
        let text = tool_output_text("call_\"1", Ok(&r));
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, tool_output("call_\"1", Ok(&r.to_value())));
        assert_eq!(
            call_closing_text("c", Err("x"))[0],
            tool_output("c", Err("x")).to_string()
        );
    }
}
