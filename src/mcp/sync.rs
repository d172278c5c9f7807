//! `POST /v1/providers/{id}/sync` (M1): lists the MCP server's tools (every page, bounded)
//! with the org's credential, through the guarded caller, and makes the provider's tools
//! exactly that list — added, updated in place, removed — reporting what changed.
//! A tool's name on the server is kept as its `path` (`/<name>`); its loopgate name is
//! that name made to fit `[A-Za-z0-9_-]{1,64}`, unique within the provider. M3: a tool
//! that requires or allows tasks (`execution.taskSupport`) is imported like any other,
//! its task support kept at its input schema's root ([`mcp_task::SCHEMA_KEY`]) for the
//! call to read.

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::call::{Runtime, RuntimeError};
use crate::store::providers::Provider;
use crate::store::tool_mcp_meta;
use crate::store::tools::{self, SyncChanges, Tool, ToolFields, ToolKind};
use crate::store::OrgId;
use crate::upstream::mcp::task::{self as mcp_task, TaskSupport};
use crate::upstream::mcp::{self, McpClient};
use crate::upstream::Target;

/// `tools/list` pages read at most; a longer list is refused, never imported in part.
pub const MAX_PAGES: usize = 50;
/// Tools imported at most from one server.
pub const MAX_TOOLS: usize = 2_000;
const LIST_TIMEOUT: Duration = Duration::from_secs(60);
const DESCRIPTION_MAX: usize = 4096;

/// A listed tool that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// The provider's tools after the sync, and what changed.
#[derive(Debug, Serialize, ToSchema)]
pub struct SyncReport {
    pub data: Vec<Tool>,
    #[serde(flatten)]
    pub changes: SyncChanges,
    pub skipped: Vec<Skipped>,
}

/// Lists the server's tools and stores them as the provider's tools.
pub async fn sync(
    runtime: &Runtime,
    org: &OrgId,
    provider: &Provider,
) -> Result<SyncReport, RuntimeError> {
    let target = Target::new(
        &provider.base_url,
        "POST",
        "/",
        &json!({}),
        provider.auth.clone(),
        runtime.org_credential(org, &provider.id).await?,
    );
    let limiter = runtime
        .walker()
        .rate_limits()
        .for_provider(&provider.id, provider.rate_limit.as_ref());
    let client = McpClient {
        caller: runtime.walker().http(),
        sessions: runtime.walker().mcp_sessions(),
        target: &target,
        rate: limiter.as_deref(),
    };
    let listed = client
        .list_tools(MAX_PAGES, LIST_TIMEOUT)
        .await
        .map_err(|e| {
            RuntimeError::Upstream(format!("listing the MCP server's tools failed: {e}"))
        })?;
    if listed.len() > MAX_TOOLS {
        return Err(RuntimeError::Upstream(format!(
            "the MCP server lists {} tools, more than the {MAX_TOOLS} a provider may hold; nothing was imported",
            listed.len()
        )));
    }
    let (wanted, skipped) = to_fields(&provider.id, &listed);
    let (data, mut changes) =
        tools::sync_provider(runtime.pool(), org, &provider.id, &wanted).await?;
    let ids: Vec<String> = data.iter().map(|t| t.id.clone()).collect();
    runtime.embed_tools_later(org, &ids);
    let meta = meta_by_path(&listed);
    for name in tool_mcp_meta::set(runtime.pool(), org, &provider.id, &meta).await? {
        if !changes.updated.contains(&name) && !changes.added.contains(&name) {
            changes.unchanged = changes.unchanged.saturating_sub(1);
            changes.updated.push(name);
        }
    }
    Ok(SyncReport {
        data,
        changes,
        skipped,
    })
}

/// The tools to store for a `tools/list` answer, and the ones that cannot be.
pub fn to_fields(provider_id: &str, listed: &[Value]) -> (Vec<ToolFields>, Vec<Skipped>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut remote_seen = HashSet::new();
    let mut names = HashSet::new();
    for t in listed {
        let remote = t.get("name").and_then(Value::as_str).unwrap_or("");
        let skip = |reason: &str| Skipped {
            name: remote.to_string(),
            reason: reason.to_string(),
        };
        if remote.is_empty() || remote.len() > 256 {
            skipped.push(skip("a tool name must be 1 to 256 characters"));
            continue;
        }
        if remote.contains(['{', '}', '#'])
            || remote.contains("://")
            || remote.chars().any(char::is_control)
        {
            skipped.push(skip("the name holds characters loopgate cannot call it by"));
            continue;
        }
        if !remote_seen.insert(remote) {
            skipped.push(skip("listed twice; the first one was imported"));
            continue;
        }
        let mut schema = match t.get("inputSchema") {
            Some(Value::Object(o)) => o.clone(),
            None | Some(Value::Null) => Default::default(),
            Some(_) => {
                skipped.push(skip("its inputSchema is not a JSON Schema object"));
                continue;
            }
        };
        match schema.get("type") {
            None => {
                schema.insert("type".into(), json!("object"));
            }
            Some(t) if t == "object" => {}
            Some(_) => {
                skipped.push(skip("its inputSchema does not describe an object"));
                continue;
            }
        }
        // D6: what search reads besides the description and input properties
        if let Some(extras) = crate::discovery::document::mcp_extras(t) {
            schema.insert(crate::discovery::DOC_KEY.into(), extras);
        }
        // M3: whether it runs as a task; the server's own key of that name is replaced
        schema.remove(mcp_task::SCHEMA_KEY);
        if let Some(tasks) = TaskSupport::of_listed(t).schema_entry() {
            schema.insert(mcp_task::SCHEMA_KEY.into(), tasks);
        }
        let description = t
            .get("description")
            .or_else(|| t.get("title"))
            .and_then(Value::as_str)
            .unwrap_or("");
        out.push(ToolFields {
            provider_id: provider_id.to_string(),
            name: unique_name(remote, &mut names),
            description: truncate(description, DESCRIPTION_MAX).to_string(),
            method: "POST".into(),
            path: mcp::tool_path(remote),
            input_schema: Value::Object(schema),
            kind: ToolKind::Mcp,
            toolkit: None,
        });
    }
    (out, skipped)
}

/// What of a listed tool is kept beside its stored definition and served again by the
/// agents' MCP servers (M2): `title`, `annotations` and `outputSchema`, when well-formed.
/// Keyed by the tool's path; `{}` for a tool with none (the first listing of a name wins).
pub fn meta_by_path(listed: &[Value]) -> Value {
    let mut out = serde_json::Map::new();
    for t in listed {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut meta = serde_json::Map::new();
        if let Some(title) = t.get("title").filter(|v| v.is_string()) {
            meta.insert("title".into(), title.clone());
        }
        for key in ["annotations", "outputSchema"] {
            if let Some(v) = t.get(key).filter(|v| v.is_object()) {
                meta.insert(key.into(), v.clone());
            }
        }
        out.entry(mcp::tool_path(name))
            .or_insert(Value::Object(meta));
    }
    Value::Object(out)
}

/// `remote` made to fit `[A-Za-z0-9_-]{1,64}`, with `_2`, `_3`… when taken.
fn unique_name(remote: &str, taken: &mut HashSet<String>) -> String {
    let base: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        let suffix = format!("_{n}");
        name = format!("{}{suffix}", &base[..base.len().min(64 - suffix.len())]);
        n += 1;
    }
    name
}

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn m1_listed_tools_become_mcp_tools_named_for_models() {
        let listed = vec![
            json!({"name": "search.issues", "description": "Find issues", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}),
            json!({"name": "search_issues", "title": "Same name once cleaned"}),
            json!({"name": "search.issues"}),
            json!({"name": "bad{name}"}),
            json!({"name": "scalar", "inputSchema": {"type": "string"}}),
            json!({"description": "no name"}),
        ];
        let (fields, skipped) = to_fields("prv_1", &listed);
        let names: Vec<_> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["search_issues", "search_issues_2"]);
        assert_eq!(fields[0].path, "/search.issues");
        assert_eq!(fields[0].kind, ToolKind::Mcp);
        assert_eq!(fields[1].description, "Same name once cleaned");
        // no inputSchema: an object; D6: its title kept for search (never shown to a model)
        assert_eq!(
            fields[1].input_schema,
            json!({"type": "object", "x-loopgate-doc": {"title": "Same name once cleaned"}})
        );
        assert_eq!(skipped.len(), 4, "{skipped:?}");
    }

    #[test]
    fn m3_tools_that_require_or_allow_tasks_are_imported_with_their_support() {
        let listed = vec![
            json!({"name": "batch", "execution": {"taskSupport": "required"}}),
            json!({"name": "maybe", "execution": {"taskSupport": "optional"}}),
            // a server's own key of loopgate's name is not taken for the listing's
            json!({"name": "plain", "inputSchema": {"type": "object",
                   "x-loopgate-mcp": {"taskSupport": "required"}}}),
        ];
        let (fields, skipped) = to_fields("prv_1", &listed);
        assert!(skipped.is_empty(), "{skipped:?}");
        let support: Vec<_> = fields
            .iter()
            .map(|f| (f.name.as_str(), TaskSupport::of_schema(&f.input_schema)))
            .collect();
        assert_eq!(
            support,
            [
                ("batch", TaskSupport::Required),
                ("maybe", TaskSupport::Optional),
                ("plain", TaskSupport::Forbidden),
            ]
        );
        assert_eq!(
            fields[0].input_schema,
            json!({"type": "object", "x-loopgate-mcp": {"taskSupport": "required"}})
        );
    }

    #[test]
    fn m2_title_annotations_and_output_schema_are_kept_by_path() {
        let listed = vec![
            json!({"name": "shot", "title": "Screenshot", "annotations": {"readOnlyHint": true},
                   "outputSchema": {"type": "object"}, "other": 1}),
            json!({"name": "plain", "title": 7, "annotations": "no"}),
            json!({"name": "shot", "title": "second listing"}),
        ];
        assert_eq!(
            meta_by_path(&listed),
            json!({"/shot": {"title": "Screenshot", "annotations": {"readOnlyHint": true},
                              "outputSchema": {"type": "object"}},
                   "/plain": {}})
        );
    }

    #[test]
    fn long_names_stay_within_64_characters_and_unique() {
        let long = "x".repeat(100);
        let mut taken = HashSet::new();
        let a = unique_name(&long, &mut taken);
        let b = unique_name(&long, &mut taken);
        assert_eq!(a.len(), 64);
        assert!(b.len() <= 64 && b.ends_with("_2") && a != b);
    }
}
