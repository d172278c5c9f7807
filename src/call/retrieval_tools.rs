//! The retrieval tools (G4, G6): `queryToolResult` and `fetchToolResult` read a result
//! stored earlier in the same thread, and reading it lifts the thread's restriction for
//! it (G5).

use serde_json::Value;

use crate::call::{Runtime, RuntimeError, ThreadKey};
use crate::results::stored_results;

pub const QUERY_TOOL: &str = "queryToolResult";
pub const FETCH_TOOL: &str = "fetchToolResult";

impl Runtime {
    pub(super) async fn retrieve(
        &self,
        thread: &ThreadKey,
        name: &str,
        args: &Value,
        agent: &crate::call::AgentView,
    ) -> Result<Value, RuntimeError> {
        let id = args
            .get("resultId")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                RuntimeError::Engine(loopgate_engine::EngineError::InvalidArguments {
                    detail: format!("{name} needs `resultId`: the _resultId of an earlier result in this conversation"),
                })
            })?
            .to_string();
        let stored = stored_results::load(self.kv(), thread, &id).await?;
        let provenance = match name {
            QUERY_TOOL => stored_results::provenance(self.kv(), thread, &id).await?,
            _ => None,
        };
        // filtering and aggregating thousands of rows is CPU work: off the async workers
        let limits = self.limits_for(agent).into_owned();
        let (args, name) = (args.clone(), name.to_owned());
        let value = self
            .walker
            .cpu()
            .run(&thread.org, stored.len(), move || {
                if name == QUERY_TOOL {
                    loopgate_engine::query_result_json(stored, provenance.as_ref(), &args, &limits)
                } else {
                    loopgate_engine::fetch_result(&stored, &args, &limits)
                }
            })
            .await?;
        stored_results::mark_read(self.kv(), thread, &id).await?;
        Ok(value)
    }
}
