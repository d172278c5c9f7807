//! A tool call as accepted: its input (`POST …/tool-calls`), how its record and event log
//! are written, and what the call carries from acceptance to its record.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::call::ThreadKey;
use crate::results::stored_results;
use crate::walk::drain::InFlight;

/// `POST …/tool-calls` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallInput {
    pub name: String,
    /// The tool's arguments, with the loop engine's reserved ones (`_all_pages`, `_fields`,
    /// `_for_each`, `_filter`, `_continue`, `_refresh`). Values by reference (LOOP_ENGINE
    /// E6): `_for_each.values`, or any argument not declared an object, may be
    /// `{"fromResult": "<_resultId>", "path": "<field of each row>", "filter"?: [clauses]}`,
    /// read server-side from this thread's own stored result; a fan-out by reference walks
    /// 50 values a call and continues with `_continue`.
    #[serde(default = "empty_object")]
    #[schema(schema_with = crate::call::arguments_schema::tool_call_arguments)]
    pub arguments: Value,
    /// Experiment runs never read from or write to the dataset cache.
    #[serde(default)]
    pub experiment: bool,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// How a call's record and event log are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// A streamed call: its id is in the stream's first chunks, so it may be followed from
    /// any replica (`GET …/events`) and read back while it runs. A `running` record at the
    /// start, the live event log, the log flushed before the record says finished (S1), then
    /// the followers' wake-up.
    Live,
    /// A call whose id nobody learns before it ends (a JSON response, an MCP `tools/call`):
    /// nothing could follow it, so no event log, and one finished record written at its end.
    Once,
}

/// A call that has been accepted (and, when [`Recording::Live`], recorded), ready to execute.
#[derive(Debug, Clone)]
pub struct CallStart {
    pub id: String,
    pub recording: Recording,
    /// When the call was accepted: its record's `created_at`.
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub thread: ThreadKey,
    pub agent_id: String,
    pub input: ToolCallInput,
    /// The agent and its compiled tools, loaded once for the whole call.
    pub agent: Arc<crate::call::AgentView>,
    /// The thread's G5 marks when they were read with the agent (the same point of the
    /// call): used instead of reading them again.
    pub marks: Option<stored_results::Marks>,
    /// The config epoch the agent and thread were remembered at, not read for this call
    /// yet (`call::threads::InThread::unchecked`, `call::memory_hit`).
    pub unchecked: Option<crate::call::agent_memory::Epoch>,
    /// The thread as the caller named it (to load the agent and thread again).
    pub thread_key: String,
    /// Keeps a draining replica up until the call has recorded its outcome.
    pub in_flight: Arc<InFlight>,
}
