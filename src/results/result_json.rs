//! A tool call's result as its final JSON text: written once — by the engine for a tool's
//! result (labels included), or from a small value for retrieval and discovery tools —
//! then sent, recorded and streamed as it is. Nobody parses it back to edit it.
//!
//! A text filled from a presented template (a cache hit) also carries the template's
//! stored body (shared, not copied) and the id it was filled with, so its record is a
//! reference to the body instead of another copy of the text ([`ResultJson::recorded`]).

use std::sync::Arc;

use serde_json::Value;

use crate::store::tool_calls::{Body, Filled, Outcome};

#[derive(Debug, Clone, PartialEq)]
pub struct ResultJson {
    json: String,
    /// `json` is the body's parts joined by the fill.
    body: Option<(Arc<Body>, String)>,
}

impl ResultJson {
    /// Text the engine wrote (JSON by construction).
    pub(crate) fn from_engine(json: String) -> Self {
        Self { json, body: None }
    }

    /// Text the engine wrote that is exactly `body`'s parts joined by `fill`.
    pub(crate) fn filled(json: String, body: Arc<Body>, fill: String) -> Self {
        Self {
            json,
            body: Some((body, fill)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.json
    }

    /// The text itself, moved out (once it is recorded).
    pub fn into_string(self) -> String {
        self.json
    }

    /// How the call's record keeps it: a reference to its body, or its text.
    pub fn recorded(&self) -> Outcome {
        match &self.body {
            Some((body, fill)) => Outcome::Filled(Filled {
                body: body.clone(),
                fill: fill.clone(),
                with_body: false,
            }),
            None => Outcome::Succeeded(self.json.clone()),
        }
    }

    /// As a tree, for the few readers that need one (MCP's `structuredContent`).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or_else(|_| Value::String(self.json.clone()))
    }
}

impl From<Value> for ResultJson {
    fn from(v: Value) -> Self {
        Self::from_engine(v.to_string())
    }
}
