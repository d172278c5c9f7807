//! D6: what search reads of a tool — its document. Built from what the tool holds: the
//! name (an `operationId` split into words), the description, the method and path (path
//! words, and the action they imply), the parameters (names, descriptions, enum values),
//! and what import and sync kept beside them under [`DOC_KEY`] at the input schema's root:
//! the operation's summary, tags and response field names (OpenAPI), or the title and
//! annotations (MCP). The toolkit's and provider's names come from the binding.
//!
//! Each part is a separate field of the BM25F index ([`Field`]); the action is also a bit
//! set matched against the request's ([`super::text::actions`]). Pure and bounded: every
//! list is cut before it is read.

use serde_json::{Map, Value};

use super::text::{name_actions, ACTION_NAMES};

/// Key of the search document's extras at the root of a tool's input schema
/// (`x-loopgate-*` keys are never shown to a model or sent upstream).
pub const DOC_KEY: &str = "x-loopgate-doc";

/// Parameters read at most (top level and one level into `body`).
const MAX_PARAMS: usize = 60;
/// Enum values read at most per parameter.
const MAX_ENUM: usize = 20;
/// Tags and response fields kept at most.
pub const MAX_TAGS: usize = 10;
pub const MAX_FIELDS: usize = 40;
/// Longest text kept of one part (characters).
const MAX_PART: usize = 2_000;

/// The fields of a tool's document, in index order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The tool's name (an `operationId`, split into words).
    Name = 0,
    /// The summary (OpenAPI) or title (MCP), else the name again.
    Summary,
    Description,
    /// Literal path segments and tags.
    Path,
    /// The toolkit's and provider's names.
    Toolkit,
    /// The action its method and path imply, as words (`list`, `create`, …).
    Action,
    /// Parameter names.
    Params,
    /// Parameter descriptions and enum values.
    ParamText,
    /// The response's top-level field names.
    Response,
}

pub const FIELD_COUNT: usize = 9;

/// One tool's searchable text, by field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolDoc {
    pub parts: [String; FIELD_COUNT],
    /// Action classes (bits of [`super::text::actions`]) of the method and path, or of
    /// the name's verb when there is no HTTP method to go by.
    pub actions: u16,
}

/// What a tool is, as the document is built from it.
#[derive(Debug, Clone, Copy)]
pub struct ToolSource<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// Upper-case HTTP method; MCP tools carry `POST` and an MCP path: see `mcp`.
    pub method: &'a str,
    pub path: &'a str,
    pub input_schema: &'a Value,
    /// Toolkit and provider names (either may be empty).
    pub toolkit: &'a str,
    pub provider: &'a str,
    /// An MCP tool: its method and path say nothing about what it does.
    pub mcp: bool,
}

impl ToolDoc {
    pub fn build(t: &ToolSource<'_>) -> Self {
        let extras = t.input_schema.get(DOC_KEY);
        let text = |k: &str| extras.and_then(|e| e.get(k)).and_then(Value::as_str);
        let list = |k: &str, max: usize| -> Vec<String> {
            extras
                .and_then(|e| e.get(k))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .take(max)
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut parts: [String; FIELD_COUNT] = Default::default();
        parts[Field::Name as usize] = cut(t.name);
        // a tool without a summary or title is summed up by its name
        let summary = text("summary")
            .or(text("title"))
            .map(str::trim)
            .filter(|s| !s.is_empty());
        parts[Field::Summary as usize] = cut(summary.unwrap_or(t.name));
        parts[Field::Description as usize] = cut(t.description);
        let mut path_words: Vec<String> = if t.mcp {
            Vec::new()
        } else {
            literal_segments(t.path).map(str::to_owned).collect()
        };
        path_words.extend(list("tags", MAX_TAGS));
        parts[Field::Path as usize] = cut(&path_words.join(" "));
        parts[Field::Toolkit as usize] = if t.toolkit.eq_ignore_ascii_case(t.provider) {
            cut(t.toolkit)
        } else {
            cut(&format!("{} {}", t.toolkit, t.provider))
        };
        // the action as words only where the name may not say it (an HTTP method and
        // path, an MCP annotation): a verb already in the name is not counted twice
        let (actions, said) = if t.mcp || t.method.is_empty() {
            let said = annotation_actions(extras);
            (name_actions(t.name) | said, said)
        } else {
            // an RPC-style operation says its verb in its name (`messages_trash`,
            // `pulls/merge`) where its method says only POST or PUT
            let m = method_actions(t.method, t.path);
            (m | name_actions(t.name), m)
        };
        parts[Field::Action as usize] = action_words(said);
        let (names, text) = params_text(t.input_schema);
        parts[Field::Params as usize] = cut(names.trim_end());
        parts[Field::ParamText as usize] = cut(&text);
        parts[Field::Response as usize] = cut(&list("responseFields", MAX_FIELDS).join(" "));
        ToolDoc { parts, actions }
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_PART) {
        Some((i, _)) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}

/// The path's literal segments (`/repos/{owner}/{repo}/issues` → `repos`, `issues`).
fn literal_segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter(|s| !s.is_empty() && !s.contains('{') && !s.starts_with(':'))
}

/// The action an HTTP method and path imply: GET on a collection lists and on an item
/// gets; POST creates (or sends); PUT and PATCH update; DELETE removes.
pub fn method_actions(method: &str, path: &str) -> u16 {
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let on_item = last.contains('{') || last.starts_with(':');
    let bit = |name: &str| {
        ACTION_NAMES
            .iter()
            .position(|a| *a == name)
            .map_or(0u16, |i| 1 << i)
    };
    match method.to_ascii_uppercase().as_str() {
        "GET" | "HEAD" if on_item => bit("get"),
        "GET" | "HEAD" => bit("list"),
        "POST" => bit("create") | bit("send"),
        "PUT" | "PATCH" => bit("update"),
        "DELETE" => bit("delete"),
        _ => 0,
    }
}

/// MCP annotations: a destructive tool deletes (a read-only one may list or get: its
/// name says which).
fn annotation_actions(extras: Option<&Value>) -> u16 {
    let Some(a) = extras.and_then(|e| e.get("annotations")) else {
        return 0;
    };
    let bit = |name: &str| {
        ACTION_NAMES
            .iter()
            .position(|a| *a == name)
            .map_or(0u16, |i| 1 << i)
    };
    let mut m = 0;
    if a.get("destructiveHint") == Some(&Value::Bool(true)) {
        m |= bit("delete");
    }
    m
}

fn action_words(mask: u16) -> String {
    ACTION_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parameter names, and their descriptions and enum values, top level and one level into
/// `body`; reserved (`_…`) and `x-loopgate-*` keys are not the API's.
fn params_text(schema: &Value) -> (String, String) {
    let (mut names, mut text) = (String::new(), String::new());
    let mut n = 0;
    collect_params(schema, &mut names, &mut text, &mut n, 0);
    (names, text)
}

fn collect_params(schema: &Value, names: &mut String, out: &mut String, n: &mut usize, depth: u8) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, p) in props {
        if *n >= MAX_PARAMS || out.len() > MAX_PART {
            return;
        }
        if name.starts_with('_') || name.starts_with("x-") {
            continue;
        }
        *n += 1;
        names.push_str(name);
        names.push(' ');
        push_schema_words(p, out);
        if depth == 0 && name == "body" {
            collect_params(p, names, out, n, 1);
        }
    }
}

fn push_schema_words(p: &Value, out: &mut String) {
    if let Some(d) = p.get("description").and_then(Value::as_str) {
        out.push_str(d);
        out.push(' ');
    }
    let values = p
        .get("enum")
        .or_else(|| p.get("items").and_then(|i| i.get("enum")));
    if let Some(Value::Array(vs)) = values {
        for v in vs.iter().take(MAX_ENUM) {
            if let Some(s) = v.as_str() {
                out.push_str(s);
                out.push(' ');
            }
        }
    }
}

/// The `x-loopgate-doc` extras of an OpenAPI operation: summary, tags and the success
/// response's top-level field names (`fields`, read by `openapi_import`).
pub fn openapi_extras(summary: Option<&str>, tags: &[String], fields: &[String]) -> Value {
    let mut m = Map::new();
    if let Some(s) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        m.insert("summary".into(), Value::String(cut_chars(s, 300)));
    }
    if !tags.is_empty() {
        m.insert(
            "tags".into(),
            tags.iter()
                .take(MAX_TAGS)
                .map(|t| Value::String(cut_chars(t, 80)))
                .collect(),
        );
    }
    if !fields.is_empty() {
        m.insert(
            "responseFields".into(),
            fields
                .iter()
                .take(MAX_FIELDS)
                .map(|t| Value::String(cut_chars(t, 80)))
                .collect(),
        );
    }
    Value::Object(m)
}

/// The `x-loopgate-doc` extras of an MCP tool: its title and annotations, when
/// well-formed.
pub fn mcp_extras(listed: &Value) -> Option<Value> {
    let mut m = Map::new();
    if let Some(t) = listed.get("title").and_then(Value::as_str) {
        m.insert("title".into(), Value::String(cut_chars(t, 300)));
    }
    if let Some(Value::Object(a)) = listed.get("annotations") {
        let mut kept = Map::new();
        for (k, v) in a.iter().take(10) {
            if v.is_boolean() || v.is_string() {
                kept.insert(k.clone(), v.clone());
            }
        }
        if let Some(t) = a.get("title").and_then(Value::as_str) {
            m.entry("title")
                .or_insert_with(|| Value::String(cut_chars(t, 300)));
        }
        m.insert("annotations".into(), Value::Object(kept));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

fn cut_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source<'a>(method: &'a str, path: &'a str, schema: &'a Value) -> ToolSource<'a> {
        ToolSource {
            name: "issues/update",
            description: "Update an issue. Issue owners can close it.",
            method,
            path,
            input_schema: schema,
            toolkit: "github",
            provider: "GitHub",
            mcp: false,
        }
    }

    #[test]
    fn d6_the_method_and_path_imply_the_action() {
        let bits = |names: &[&str]| {
            names.iter().fold(0u16, |m, n| {
                m | 1 << ACTION_NAMES.iter().position(|a| a == n).expect("an action")
            })
        };
        assert_eq!(
            method_actions("GET", "/repos/{owner}/{repo}/issues"),
            bits(&["list"])
        );
        assert_eq!(method_actions("GET", "/issues/{id}"), bits(&["get"]));
        assert_eq!(method_actions("GET", "/issues/:id/"), bits(&["get"]));
        assert_eq!(method_actions("POST", "/issues"), bits(&["create", "send"]));
        assert_eq!(method_actions("PATCH", "/issues/{id}"), bits(&["update"]));
        assert_eq!(
            method_actions("put", "/user/starred/{o}/{r}"),
            bits(&["update"])
        );
        assert_eq!(method_actions("DELETE", "/issues/{id}"), bits(&["delete"]));
        assert_eq!(method_actions("OPTIONS", "/x"), 0);
    }

    #[test]
    fn d6_every_part_of_the_description_has_its_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "issue_number": {"type": "integer", "description": "The number of the issue."},
                "_all_pages": {"type": "boolean", "description": "reserved"},
                "body": {"type": "object", "properties": {
                    "state": {"type": "string", "enum": ["open", "closed"], "description": "State of the issue."}
                }}
            },
            DOC_KEY: {"summary": "Update an issue", "tags": ["issues"], "responseFields": ["id", "state_reason"]}
        });
        let d = ToolDoc::build(&source(
            "PATCH",
            "/repos/{owner}/{repo}/issues/{issue_number}",
            &schema,
        ));
        let part = |f: Field| d.parts[f as usize].as_str();
        assert_eq!(part(Field::Summary), "Update an issue");
        assert_eq!(part(Field::Path), "repos issues issues");
        assert_eq!(part(Field::Toolkit), "github");
        assert_eq!(part(Field::Action), "update");
        assert_eq!(part(Field::Params), "issue_number body state");
        assert!(part(Field::ParamText).contains("The number of the issue."));
        assert!(
            part(Field::ParamText).contains("closed"),
            "enum values: {}",
            part(Field::ParamText)
        );
        assert!(!part(Field::ParamText).contains("reserved"));
        assert_eq!(part(Field::Response), "id state_reason");
    }

    #[test]
    fn d6_mcp_tools_read_their_title_annotations_and_name_verb() {
        let listed = json!({"name": "delete_page", "title": "Delete a page",
            "annotations": {"destructiveHint": true, "readOnlyHint": false, "x": {"nested": 1}}});
        let extras = mcp_extras(&listed).expect("extras");
        assert_eq!(
            extras["annotations"],
            json!({"destructiveHint": true, "readOnlyHint": false})
        );
        let schema = json!({"type": "object", DOC_KEY: extras});
        let d = ToolDoc::build(&ToolSource {
            name: "delete_page",
            description: "",
            method: "POST",
            path: "/delete_page",
            input_schema: &schema,
            toolkit: "",
            provider: "Notes",
            mcp: true,
        });
        assert_eq!(d.parts[Field::Summary as usize], "Delete a page");
        assert_eq!(
            d.parts[Field::Action as usize],
            "delete",
            "from its annotation"
        );
        assert_ne!(d.actions, 0);
        assert_eq!(
            d.parts[Field::Path as usize],
            "",
            "an MCP path is the tool's own name"
        );
        assert_eq!(mcp_extras(&json!({"name": "x"})), None);
    }

    #[test]
    fn d6_long_parts_are_cut() {
        let long = "word ".repeat(2_000);
        let schema = json!({});
        let mut s = source("GET", "/x", &schema);
        s.description = &long;
        let d = ToolDoc::build(&s);
        assert_eq!(
            d.parts[Field::Description as usize].chars().count(),
            MAX_PART
        );
    }
}
