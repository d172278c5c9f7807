//! D1, D3: the meta-tools as the model sees them. `search_tools` / `load_tool` are
//! offered only when something is pooled; `list_connections` / `connect_toolkit` when
//! the agent holds a connected-app toolkit. None of them counts against the budget.

use serde_json::json;

use loopgate_engine::ModelTool;

pub const SEARCH_TOOLS: &str = "search_tools";
pub const LOAD_TOOL: &str = "load_tool";
pub const LIST_CONNECTIONS: &str = "list_connections";
pub const CONNECT_TOOLKIT: &str = "connect_toolkit";

/// Results `search_tools` returns when the model gives no `limit`, and the most it may
/// ask for. Eight: on the evaluation sets' dev halves recall grows from 79.6 % at five
/// results to 84.2 % at eight (about 140 and 230 tokens read) and to 84.7 % at ten
/// (about 290): past eight a result costs its tokens for almost nothing
/// (`docs/performance.md`, "Search quality").
pub const SEARCH_DEFAULT_LIMIT: usize = 8;
pub const SEARCH_MAX_LIMIT: usize = 25;
/// Names one `load_tool` call may load.
pub const LOAD_MAX: usize = 25;

pub fn is_meta(name: &str) -> bool {
    matches!(
        name,
        SEARCH_TOOLS | LOAD_TOOL | LIST_CONNECTIONS | CONNECT_TOOLKIT
    )
}

/// Toolkit names listed in `search_tools`' description at most (the rest are still
/// searchable, and named in the error for an unknown `toolkit`).
pub const LISTED_TOOLKITS: usize = 40;

/// `search_tools` and `load_tool`; `toolkits` names the pooled toolkits for the model
/// (D6: listed in the description, the values of `toolkit`).
pub fn discovery_tools(toolkits: &[&str]) -> Vec<ModelTool> {
    let listed = &toolkits[..toolkits.len().min(LISTED_TOOLKITS)];
    let kits = if listed.is_empty() {
        String::new()
    } else {
        let more = if toolkits.len() > listed.len() {
            ", …"
        } else {
            ""
        };
        format!(" Searchable toolkits: {}{more}.", listed.join(", "))
    };
    let mut toolkit = json!({
        "type": "string",
        "description": "Search only this toolkit (app), when you know which one the task is for."
    });
    if !listed.is_empty() && toolkits.len() == listed.len() {
        toolkit["enum"] = json!(listed);
    }
    vec![
        ModelTool {
            name: SEARCH_TOOLS.into(),
            description: format!(
                "Find more tools. Write the query as \"app: action object\" in the API's own words \
                 (e.g. \"github: create issue comment\", \"stripe: list invoices\", \"calendar: move event\"); \
                 name the app when you know it, or pass `toolkit` to search one app only. Returns \
                 {{tools: [{{name, description, toolkit}}]}}, best first, {SEARCH_DEFAULT_LIMIT} by default: \
                 read every description and pick the one that does the task, then call load_tool with \
                 the names you want before using them. If none fits, search again with other words.{kits}"
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "\"app: action object\" in the API's words, e.g. \"github: close issue\"."},
                    "toolkit": toolkit,
                    "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT, "default": SEARCH_DEFAULT_LIMIT}
                },
                "required": ["query"]
            }),
        },
        ModelTool {
            name: LOAD_TOOL.into(),
            description: "Load tools found with search_tools so that you can call them: pass `toolName` \
                          or `toolNames`. Loaded tools stay available for the rest of this conversation. \
                          Returns {loaded: [names]}."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "toolName": {"type": "string", "description": "One tool name from search_tools."},
                    "toolNames": {"type": "array", "items": {"type": "string"}, "maxItems": LOAD_MAX,
                                  "description": "Several tool names from search_tools."}
                }
            }),
        },
    ]
}

/// `list_connections` and `connect_toolkit`.
pub fn connection_tools(toolkits: &[&str]) -> Vec<ModelTool> {
    vec![
        ModelTool {
            name: LIST_CONNECTIONS.into(),
            description: "List the apps (toolkits) this user can connect and whether each is connected: \
                          {connections: [{toolkit, connected}]}. A toolkit's tools only work once the user \
                          has connected it."
                .into(),
            input_schema: json!({"type": "object", "properties": {}}),
        },
        ModelTool {
            name: CONNECT_TOOLKIT.into(),
            description: "Get a link the user opens to connect an app (sign in, or paste an API key): \
                          returns {url, expires_at}. Give the user the url, ask them to tell you when they \
                          are done, then retry. The link works once and expires after 15 minutes."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {"toolkit": {"type": "string", "enum": toolkits, "description": "The toolkit to connect."}},
                "required": ["toolkit"]
            }),
        },
    ]
}
