//! The JSON-RPC messages of the agents' MCP servers (M2, M3): responses, errors and a
//! tool call's result as MCP content, shared by [`super::server`] and [`super::tasks`].

use serde_json::{json, Value};

use crate::call::ResultJson;

/// JSON-RPC error codes.
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;

pub(crate) fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Content block types a result may be served as, beside text.
const BLOCK_TYPES: &[&str] = &["text", "image", "audio", "resource", "resource_link"];

/// The blocks of a result that is exactly an MCP server's content (`{content: [...]}`,
/// as M1 keeps a result holding more than text), when one of them is not text: such a
/// result is served as its blocks, not as JSON text.
pub(crate) fn content_blocks(value: &Value) -> Option<&Vec<Value>> {
    let o = value.as_object().filter(|o| o.len() == 1)?;
    let blocks = o.get("content")?.as_array()?;
    let typed = |b: &Value| b.get("type").and_then(Value::as_str).map(str::to_string);
    let all_known = blocks
        .iter()
        .all(|b| typed(b).is_some_and(|t| BLOCK_TYPES.contains(&t.as_str())));
    let some_rich = blocks.iter().any(|b| typed(b).as_deref() != Some("text"));
    (all_known && some_rich).then_some(blocks)
}

/// A tool call's result as MCP content: the server's own blocks when it is made of them;
/// else the JSON text, and the object itself as `structuredContent` when it is one.
pub(crate) fn call_result(result: &ResultJson) -> Value {
    let value = result.to_value();
    if let Some(blocks) = content_blocks(&value) {
        return json!({"content": blocks, "isError": false});
    }
    let mut r = json!({"content": [{"type": "text", "text": result.as_str()}], "isError": false});
    if value.is_object() {
        r["structuredContent"] = value;
    }
    r
}
