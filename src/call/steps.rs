//! `steps`: what the model may see and call in its next step (L2, L4, A1, G5, D1–D3).

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::call::offered_tools;
use crate::call::{AgentView, Runtime, RuntimeError, ThreadKey};
use crate::discovery::meta;
use crate::results::stored_results;
use loopgate_engine::ModelTool;

/// A tool as the model sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ToolView {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// The next model step of a thread.
#[derive(Debug, Serialize, ToSchema)]
pub struct StepView {
    pub step: i64,
    /// System messages: the loop guidance (for agents holding looping tools) and the agent's instructions.
    pub system: Vec<String>,
    pub tools: Vec<ToolView>,
    /// `true` when an unread cut result limits this step to the retrieval tools.
    pub restricted: bool,
}

/// Removes loopgate's own `x-loopgate-*` annotations, at the root (the search document,
/// paging evidence and hints) and on each property: the model needs none of them.
fn for_model(mut schema: Value) -> Value {
    if let Some(root) = schema.as_object_mut() {
        root.retain(|k, _| !k.starts_with("x-loopgate-"));
    }
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for p in props.values_mut() {
            if let Some(o) = p.as_object_mut() {
                o.retain(|k, _| !k.starts_with("x-loopgate-"));
            }
        }
    }
    schema
}

fn view(t: ModelTool) -> ToolView {
    ToolView {
        name: t.name,
        description: t.description,
        input_schema: for_model(t.input_schema),
    }
}

impl Runtime {
    /// The next step of the thread: counts the step and, when a cut result is unread,
    /// restricts the thread (G5) from now on.
    #[tracing::instrument(skip_all, fields(loopgate.org = %caller.org(), loopgate.agent = agent_id))]
    pub async fn steps(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<StepView, RuntimeError> {
        self.step_view(caller, agent_id, thread_key, true).await
    }

    /// What `steps` would answer now, without counting a step or restricting the thread
    /// (`step` is 0): the MCP server's `initialize` (M2).
    pub async fn peek_steps(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<StepView, RuntimeError> {
        self.step_view(caller, agent_id, thread_key, false).await
    }

    /// [`Runtime::peek_steps`] for an agent and thread already loaded: the MCP server
    /// compares it before and after a call (M2) with the agent that call loaded once. The
    /// thread's state (results, restriction, loaded tools) is read afresh each time, but
    /// for `marks` read with the agent at the same point (the step before the call).
    pub async fn peek_loaded(
        &self,
        agent: &AgentView,
        thread: &ThreadKey,
        marks: Option<stored_results::Marks>,
    ) -> Result<StepView, RuntimeError> {
        self.step_of(agent, thread, false, marks).await
    }

    async fn step_view(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
        commit: bool,
    ) -> Result<StepView, RuntimeError> {
        let loaded = self.agent_in_thread(caller, agent_id, thread_key).await?;
        self.step_of(&loaded.agent, &loaded.thread, commit, loaded.marks)
            .await
    }

    /// `marks`: the thread's marks when they were read with the agent.
    async fn step_of(
        &self,
        agent: &AgentView,
        thread: &ThreadKey,
        commit: bool,
        marks: Option<stored_results::Marks>,
    ) -> Result<StepView, RuntimeError> {
        let step = match commit {
            true => stored_results::next_step(self.kv(), thread).await?,
            false => 0,
        };
        let mut system = Vec::new();
        if agent.looping() {
            system.push(loopgate_engine::loop_guidance().to_string());
        }
        if !agent.instructions.trim().is_empty() {
            system.push(agent.instructions.clone());
        }
        let retrieval = || loopgate_engine::retrieval_tools().into_iter().map(view);
        let marks = match marks {
            Some(m) => m,
            None => stored_results::thread_marks(self.kv(), thread).await?,
        };
        if !marks.pending.is_empty() {
            if commit {
                stored_results::set_restricted(self.kv(), thread).await?;
            }
            return Ok(StepView {
                step,
                system,
                tools: retrieval().collect(),
                restricted: true,
            });
        }
        // D1, D2: direct tools and those loaded in this thread; the rest wait in the pool
        let offer = self.offer(agent, thread).await?;
        let mut tools: Vec<ToolView> = agent
            .tools
            .iter()
            .enumerate()
            .filter(|(i, _)| offer.offered(agent, *i))
            .map(|(_, b)| {
                view(loopgate_engine::model_tool(
                    &b.tool.name,
                    &b.tool.description,
                    &b.tool.input_schema.0,
                    &b.analysis,
                    b.binding.loop_responses,
                ))
            })
            .collect();
        if offer.any_pooled() {
            let mut kits: Vec<&str> = offer
                .pooled(agent)
                .map(offered_tools::search_label)
                .collect();
            kits.sort_unstable();
            kits.dedup();
            tools.extend(meta::discovery_tools(&kits).into_iter().map(view));
        }
        // D3: the connection tools, whenever the agent holds a connected-app toolkit
        let toolkits = agent.toolkits();
        if !toolkits.is_empty() {
            tools.extend(meta::connection_tools(&toolkits).into_iter().map(view));
        }
        if agent.looping() || marks.holds {
            tools.extend(retrieval());
        }
        Ok(StepView {
            step,
            system,
            tools,
            restricted: false,
        })
    }
}

#[cfg(test)]
mod for_model_tests {
    use super::for_model;
    use serde_json::json;

    #[test]
    fn d6_the_model_sees_no_x_loopgate_key_at_the_root_or_on_a_property() {
        let schema = json!({
            "type": "object",
            "x-loopgate-doc": {"summary": "List issues", "responseFields": ["id"]},
            "x-loopgate-response": {"next": ["next"]},
            "properties": {"page": {"type": "integer", "x-loopgate-in": "query"}}
        });
        assert_eq!(
            for_model(schema),
            json!({"type": "object", "properties": {"page": {"type": "integer"}}})
        );
    }
}
