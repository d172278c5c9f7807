//! A tool call's result as its final JSON text: written once — by the engine for a tool's
//! result (labels included), or from a small value for retrieval and discovery tools —
//! then sent, recorded and streamed as it is. Nobody parses it back to edit it.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct ResultJson(String);

impl ResultJson {
    /// Text the engine wrote (JSON by construction).
    pub(crate) fn from_engine(json: String) -> Self {
        Self(json)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// As a tree, for the few readers that need one (MCP's `structuredContent`).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or_else(|_| Value::String(self.0.clone()))
    }
}

impl From<Value> for ResultJson {
    fn from(v: Value) -> Self {
        Self(v.to_string())
    }
}
