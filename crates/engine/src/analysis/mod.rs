//! P1, P5 and P8 (the schema half): what a tool's input schema says about pagination and
//! about its parameters. Names are compared normalised (case, separators, JSON:API
//! brackets: [`normalize`]), a parameter's declared type decides between a number and an
//! opaque cursor, and an `x-loopgate-pagination` object at the schema's root replaces
//! detection when an author knows better. Parameters are read at the top level and one
//! level down in the JSON request body (`body`), because imported OpenAPI tools put query
//! parameters at the top and body fields under `body`. The response half of P8 (next
//! links, flags, totals under any spelling) is in `signals`.

pub mod first_page;
pub mod signals;
pub mod signature;
pub mod summary;

use serde_json::Value;

pub use crate::analysis::signals::ResponseKeys;
use crate::analysis::signature::Signature;
use crate::learned::Learned;

/// P1 spellings (compared normalised, so `page[size]`, `PageSize` and `page-size` match
/// `pageSize`); listed as people write them for the `all_pages_unsupported` message.
pub const PAGE_SIZE_NAMES: &[&str] = &[
    "itemsPerPage",
    "per_page",
    "pageSize",
    "page[size]",
    "page[limit]",
    "maxResults",
    "limit",
    "$top",
    "size",
    "pagelen",
    "results_per_page",
];
pub const PAGE_NUMBER_NAMES: &[&str] = &[
    "page",
    "pageNumber",
    "page[number]",
    "pageIndex",
    "pageNum",
    "pageNo",
    "current_page",
];
pub const OFFSET_NAMES: &[&str] = &[
    "offset",
    "page[offset]",
    "skip",
    "$skip",
    "startIndex",
    "startAt",
    "from",
    "start",
];
/// P5 cursor parameter spellings.
pub const CURSOR_NAMES: &[&str] = &[
    "cursor",
    "page[cursor]",
    "pageToken",
    "nextPageToken",
    "after",
    "page[after]",
    "starting_after",
    "start_cursor",
    "next",
    "continuation",
    "continuationToken",
    "nextToken",
    "next_cursor",
    "$skiptoken",
    "pagination_token",
    "marker",
    "scroll_id",
];
/// Names too generic to be a position unless the schema declares them numeric.
const NUMERIC_ONLY: &[&str] = &["from", "start", "size"];

/// The schema extension an author adds at the root of an input schema when detection
/// cannot decide: `{"size": "<param>", "page"|"offset"|"cursor": "<param>"}` names the
/// parameters (a body field as `body.<name>`), or `{"disabled": true}` turns `_all_pages`
/// off. When present it replaces detection entirely.
pub const PAGINATION_HINT: &str = "x-loopgate-pagination";

/// P8: a name reduced to what people mean by it — lower case, without separators (`_`,
/// `-`, `.`), sigils (`$`, `@`) or JSON:API brackets: `page[size]`, `pageSize`, `Page-Size`
/// and `page_size` are all `pagesize`.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Where a parameter lives in the tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// The name the API itself uses, when the tool renamed it (`x-loopgate-name`: the
    /// importer turns `_page` into `page`, `$top` into `top`).
    pub api_name: Option<String>,
    /// True when the parameter is a property of the `body` object.
    pub in_body: bool,
    /// Declared JSON type (`integer`, `string`, ...), when the schema says.
    pub ty: Option<String>,
    pub minimum: Option<i64>,
    pub maximum: Option<u64>,
    /// Declared `default`, used as the first page number of a walk.
    pub default: Option<Value>,
    /// P11: the first page number the description states ("zero-based", "starts at 1").
    pub first_page_said: Option<i64>,
    /// Holds a number: declared `integer`/`number`, a string with a numeric `format` or
    /// `pattern`, or no declared type at all. A string that is not numeric is opaque (P8:
    /// the type wins over the name).
    pub numeric: bool,
}

impl Param {
    /// The name on the wire: what the API's own links and echoes carry (P12).
    pub fn wire(&self) -> &str {
        self.api_name.as_deref().unwrap_or(&self.name)
    }

    /// Whether a hint's name means this parameter: its argument name or the API's own.
    fn named(&self, name: &str, in_body: bool) -> bool {
        self.in_body == in_body && (self.name == name || self.api_name.as_deref() == Some(name))
    }

    /// The JSON value to send for position or size `n`: a number, or its text when the
    /// parameter is declared a string.
    pub fn number(&self, n: u64) -> Value {
        if self.ty.as_deref() == Some("string") {
            Value::String(n.to_string())
        } else {
            Value::from(n)
        }
    }
}

/// The result of reading one input schema. Cheap to clone; compute once per tool.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolAnalysis {
    pub page_size: Option<Param>,
    pub page_number: Option<Param>,
    pub offset: Option<Param>,
    pub cursor: Option<Param>,
    /// Every parameter, top level first, then body fields (E3 lists them).
    pub params: Vec<Param>,
    /// The declared arguments, checked before any request (`invalid_arguments`).
    pub signature: Signature,
    /// P12: where the operation's response schema puts the next position, the has-more
    /// flag and the total (`x-loopgate-response`, written by the OpenAPI importer).
    pub response: ResponseKeys,
    /// P14: what earlier walks of the tool established (set by the runtime, never read
    /// from the schema).
    pub learned: Learned,
}

impl Param {
    /// Declared numeric (not merely untyped).
    fn is_numeric_typed(&self) -> bool {
        matches!(self.ty.as_deref(), Some("integer" | "number"))
    }
}

impl ToolAnalysis {
    /// P1: a page-size parameter and a page-number or offset parameter.
    pub fn page_walkable(&self) -> bool {
        self.page_size.is_some() && (self.page_number.is_some() || self.offset.is_some())
    }

    /// P5: a cursor parameter is enough to walk (the first response confirms the style).
    pub fn cursor_walkable(&self) -> bool {
        self.cursor.is_some()
    }

    /// P12: no paging parameter is needed where the response schema says the API links
    /// its next page (a next-link key, or a `Link` header declared on the response).
    pub fn link_walkable(&self) -> bool {
        self.response.next_is_link || self.learned.response_paging
    }

    /// P14: this analysis with what the tool's walks established.
    pub fn with_learned(&self, learned: Learned) -> Self {
        Self {
            learned,
            ..self.clone()
        }
    }

    /// Whether `_all_pages` is offered for this tool.
    pub fn paginated(&self) -> bool {
        self.page_walkable() || self.cursor_walkable() || self.link_walkable()
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The names a model may use as `_for_each.key`, for error messages.
    pub fn param_names(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|p| {
                if p.in_body {
                    format!("body.{}", p.name)
                } else {
                    p.name.clone()
                }
            })
            .collect()
    }
}

/// Reads pagination parameters and the parameter list out of a tool's input schema.
pub fn analyze(input_schema: &Value) -> ToolAnalysis {
    let mut params = Vec::new();
    collect(input_schema, false, &mut params);
    if let Some(body) = input_schema.get("properties").and_then(|p| p.get("body")) {
        collect(body, true, &mut params);
    }
    let mut roles = match input_schema.get(PAGINATION_HINT) {
        Some(hint) => hinted(hint, &params),
        None => detected(&params),
    };
    // P11: a hint naming the first page number is the firmest word on it
    let first = input_schema
        .get(PAGINATION_HINT)
        .and_then(|h| h.get("first"))
        .and_then(Value::as_i64);
    if let (Some(n), Some(p)) = (first, roles[1].as_mut()) {
        p.default = Some(Value::from(n));
        p.first_page_said = Some(n);
        p.minimum = None;
    }
    let response = ResponseKeys::of(input_schema);
    ToolAnalysis {
        response,
        page_size: roles[0].clone(),
        page_number: roles[1].clone(),
        offset: roles[2].clone(),
        cursor: roles[3].clone(),
        params,
        signature: Signature::of(input_schema),
        learned: Learned::default(),
    }
}

/// P1/P8 by name and type: `[size, page, offset, cursor]`.
fn detected(params: &[Param]) -> [Option<Param>; 4] {
    let find = |names: &[&str], fits: &dyn Fn(&Param) -> bool| {
        let wanted: Vec<String> = names.iter().map(|n| normalize(n)).collect();
        let hit = |p: &&Param| {
            let n = normalize(&p.name);
            wanted.contains(&n)
                && fits(p)
                && (p.is_numeric_typed() || !NUMERIC_ONLY.iter().any(|o| normalize(o) == n))
        };
        // In list order; top-level parameters win over body fields.
        wanted
            .iter()
            .find_map(|w| {
                params
                    .iter()
                    .filter(|p| !p.in_body)
                    .find(|p| normalize(&p.name) == *w && hit(p))
            })
            .or_else(|| {
                wanted
                    .iter()
                    .find_map(|w| params.iter().find(|p| normalize(&p.name) == *w && hit(p)))
            })
            .cloned()
    };
    let numeric = |p: &Param| p.numeric;
    let opaque = |p: &Param| !p.numeric;
    let size = find(PAGE_SIZE_NAMES, &numeric);
    let page = find(PAGE_NUMBER_NAMES, &numeric);
    let offset = find(OFFSET_NAMES, &numeric);
    // A string-typed `offset` or `page` is an opaque cursor the API hands out (Airtable).
    let cursor = find(CURSOR_NAMES, &|_| true)
        .or_else(|| find(OFFSET_NAMES, &opaque))
        .or_else(|| find(PAGE_NUMBER_NAMES, &opaque));
    [size, page, offset, cursor]
}

/// The author's `x-loopgate-pagination` hint: only the parameters it names.
fn hinted(hint: &Value, params: &[Param]) -> [Option<Param>; 4] {
    if hint.get("disabled").and_then(Value::as_bool) == Some(true) {
        return [None, None, None, None];
    }
    let role = |key: &str| {
        let name = hint.get(key).and_then(Value::as_str)?;
        let (in_body, name) = match name.strip_prefix("body.") {
            Some(n) => (true, n),
            None => (false, name),
        };
        params.iter().find(|p| p.named(name, in_body)).cloned()
    };
    [role("size"), role("page"), role("offset"), role("cursor")]
}

/// The roles a hint may name.
pub const HINT_ROLES: &[&str] = &["size", "page", "offset", "cursor", "first"];

/// P12: what is wrong with the `x-loopgate-pagination` hint of `input_schema`, if
/// anything — a role naming no parameter (by the tool's argument name or the API's own),
/// an unknown key, a value that is not a name — said with the parameters there are, so
/// the author can fix it. `None` when there is no hint or it holds.
pub fn hint_problem(input_schema: &Value) -> Option<String> {
    let hint = input_schema.get(PAGINATION_HINT)?;
    let Some(obj) = hint.as_object() else {
        return Some(format!("{PAGINATION_HINT} must be an object"));
    };
    if obj.get("disabled").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let mut params = Vec::new();
    collect(input_schema, false, &mut params);
    if let Some(body) = input_schema.get("properties").and_then(|p| p.get("body")) {
        collect(body, true, &mut params);
    }
    let known = || {
        let mut names: Vec<String> = params
            .iter()
            .map(|p| {
                let at = if p.in_body { "body." } else { "" };
                match &p.api_name {
                    Some(api) => format!("{at}{} (the API's {at}{api})", p.name),
                    None => format!("{at}{}", p.name),
                }
            })
            .collect();
        if names.is_empty() {
            names.push("none".to_owned());
        }
        names.join(", ")
    };
    for (key, v) in obj {
        if key == "disabled" {
            continue;
        }
        if !HINT_ROLES.contains(&key.as_str()) {
            return Some(format!(
                "{PAGINATION_HINT}.{key} is not a role: use {} (or \"disabled\": true)",
                HINT_ROLES.join(", ")
            ));
        }
        if key == "first" {
            if !v.as_i64().is_some_and(|n| (0..=1).contains(&n)) {
                return Some(format!(
                    "{PAGINATION_HINT}.first is the API's first page number: 0 or 1"
                ));
            }
            continue;
        }
        let Some(name) = v.as_str() else {
            return Some(format!(
                "{PAGINATION_HINT}.{key} must be a parameter name; the parameters are {}",
                known()
            ));
        };
        let (in_body, bare) = match name.strip_prefix("body.") {
            Some(n) => (true, n),
            None => (false, name),
        };
        if !params.iter().any(|p| p.named(bare, in_body)) {
            return Some(format!(
                "{PAGINATION_HINT}.{key} names '{name}', which is no parameter of this tool; the parameters are {}",
                known()
            ));
        }
    }
    let has = |k: &str| obj.contains_key(k);
    if !has("cursor") && !(has("size") && (has("page") || has("offset"))) {
        return Some(format!(
            "{PAGINATION_HINT} must name a cursor, or a size with a page or an offset; the parameters are {}",
            known()
        ));
    }
    None
}

fn collect(schema: &Value, in_body: bool, out: &mut Vec<Param>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        if !in_body && name == "body" && prop.get("properties").is_some() {
            continue;
        }
        let ty = declared_type(prop);
        let numeric = match ty.as_deref() {
            None | Some("integer" | "number") => true,
            Some("string") => numeric_string(prop),
            Some(_) => false,
        };
        out.push(Param {
            name: name.clone(),
            api_name: prop
                .get("x-loopgate-name")
                .and_then(Value::as_str)
                .filter(|n| n != name)
                .map(str::to_owned),
            in_body,
            ty,
            minimum: prop.get("minimum").and_then(Value::as_i64),
            maximum: prop.get("maximum").and_then(Value::as_u64),
            default: prop.get("default").cloned(),
            first_page_said: prop
                .get("description")
                .and_then(Value::as_str)
                .and_then(first_page::said_in),
            numeric,
        });
    }
}

/// A string parameter that still holds a number: `format: int32/int64/integer/number`,
/// or a `pattern` of digits.
fn numeric_string(prop: &Value) -> bool {
    let format = prop
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let pattern = prop
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(format, "int32" | "int64" | "integer" | "number")
        || (!pattern.is_empty()
            && pattern
                .trim_matches(|c| matches!(c, '^' | '$'))
                .chars()
                .all(|c| "[]0-9\\d+*{},".contains(c)))
}

/// `type` may be a string or a list (`["integer", "null"]`); the first non-null wins.
fn declared_type(prop: &Value) -> Option<String> {
    match prop.get("type") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn p1_every_spelling_is_detected() {
        for size in PAGE_SIZE_NAMES {
            for page in PAGE_NUMBER_NAMES.iter().chain(OFFSET_NAMES) {
                let a = analyze(&schema(
                    json!({*size: {"type": "integer"}, *page: {"type": "integer"}}),
                ));
                assert!(a.page_walkable(), "{size} + {page}");
                assert_eq!(a.page_size.as_ref().map(|p| p.name.as_str()), Some(*size));
            }
        }
    }

    #[test]
    fn p1_size_alone_or_page_alone_is_not_pagination() {
        assert!(!analyze(&schema(json!({"limit": {"type": "integer"}}))).paginated());
        assert!(!analyze(&schema(json!({"page": {"type": "integer"}}))).paginated());
        assert!(!analyze(&schema(json!({"status": {"type": "string"}}))).paginated());
        assert!(!analyze(&json!({})).paginated());
    }

    #[test]
    fn p1_one_level_down_in_body() {
        let a = analyze(&schema(json!({
            "body": {"type": "object", "properties": {
                "pageSize": {"type": "integer", "maximum": 250},
                "pageNumber": {"type": "integer"}
            }}
        })));
        assert!(a.page_walkable());
        let size = a.page_size.as_ref().map(|p| (p.in_body, p.maximum));
        assert_eq!(size, Some((true, Some(250))));
        assert_eq!(a.param_names(), ["body.pageSize", "body.pageNumber"]);
    }

    #[test]
    fn p1_two_levels_down_is_not_searched() {
        let a = analyze(&schema(json!({
            "body": {"type": "object", "properties": {
                "paging": {"type": "object", "properties": {"limit": {}, "offset": {}}}
            }}
        })));
        assert!(!a.paginated());
    }

    #[test]
    fn p1_odata_names_without_dollar() {
        let a = analyze(&schema(
            json!({"top": {"type": "integer"}, "skip": {"type": "integer"}}),
        ));
        assert!(a.page_walkable());
        assert_eq!(a.page_size.map(|p| p.name), Some("top".to_owned()));
        let a = analyze(&schema(
            json!({"top": {"type": "integer"}, "skiptoken": {"type": "string"}}),
        ));
        assert!(a.cursor_walkable());
    }

    #[test]
    fn p5_cursor_names_make_a_tool_paginated() {
        let a = analyze(&schema(
            json!({"starting_after": {"type": "string"}, "limit": {"type": "integer"}}),
        ));
        assert!(a.cursor_walkable() && !a.page_walkable() && a.paginated());
    }

    #[test]
    fn p8_names_are_normalised() {
        let name = |p: Option<Param>| p.map(|p| p.name);
        // JSON:API, Zendesk.
        let a = analyze(&schema(json!({
            "page[size]": {"type": "integer"}, "page[after]": {"type": "string"}
        })));
        assert_eq!(name(a.page_size), Some("page[size]".to_owned()));
        assert_eq!(name(a.cursor), Some("page[after]".to_owned()));
        let a = analyze(&schema(json!({
            "page[size]": {"type": "integer"}, "page[number]": {"type": "integer"}
        })));
        assert_eq!(name(a.page_number.clone()), Some("page[number]".to_owned()));
        assert!(a.page_walkable());
        let a = analyze(&schema(json!({
            "page[limit]": {"type": "integer"}, "page[offset]": {"type": "integer"}
        })));
        assert_eq!(name(a.offset), Some("page[offset]".to_owned()));
        let a = analyze(&schema(json!({"page[cursor]": {"type": "string"}})));
        assert!(a.cursor_walkable());
        // Twilio's capitals, Jira's camelCase, kebab case.
        let a = analyze(&schema(json!({
            "PageSize": {"type": "integer"}, "Page": {"type": "integer"}, "PageToken": {"type": "string"}
        })));
        assert!(a.page_walkable() && a.cursor_walkable());
        let a = analyze(&schema(json!({
            "startAt": {"type": "integer"}, "maxResults": {"type": "integer"}
        })));
        assert_eq!(name(a.offset), Some("startAt".to_owned()));
        let a = analyze(&schema(json!({
            "page-size": {"type": "integer"}, "page-number": {"type": "integer"}
        })));
        assert!(a.page_walkable());
    }

    #[test]
    fn p8_the_declared_type_wins_over_the_name() {
        // Airtable: a string `offset` is an opaque cursor.
        let a = analyze(&schema(json!({
            "pageSize": {"type": "integer"}, "offset": {"type": "string"}
        })));
        assert!(a.offset.is_none());
        assert_eq!(a.cursor.map(|p| p.name), Some("offset".to_owned()));
        // A string holding digits is still a number, sent back as text.
        let a = analyze(&schema(json!({
            "limit": {"type": "string", "pattern": "^[0-9]+$"}, "offset": {"type": "string", "format": "int32"}
        })));
        assert!(a.page_walkable());
        assert_eq!(a.offset.map(|p| p.number(40)), Some(json!("40")));
        // Generic names count only when declared numeric.
        let a = analyze(&schema(json!({"size": {}, "from": {}})));
        assert!(!a.paginated());
        let a = analyze(&schema(json!({
            "size": {"type": "integer"}, "from": {"type": "integer"}
        })));
        assert!(a.page_walkable());
        let a = analyze(&schema(
            json!({"size": {"type": "string"}, "page": {"type": "integer"}}),
        ));
        assert!(
            !a.page_walkable(),
            "a string `size` is a filter, not a page size"
        );
    }

    #[test]
    fn p8_the_schema_hint_replaces_detection() {
        let mut s = schema(json!({
            "n": {"type": "integer"}, "pos": {"type": "string"}, "limit": {"type": "integer"}, "offset": {"type": "integer"}
        }));
        s[PAGINATION_HINT] = json!({"size": "n", "cursor": "pos"});
        let a = analyze(&s);
        assert_eq!(a.page_size.map(|p| p.name), Some("n".to_owned()));
        assert_eq!(a.cursor.map(|p| p.name), Some("pos".to_owned()));
        assert!(a.offset.is_none());
        s[PAGINATION_HINT] = json!({"disabled": true});
        assert!(!analyze(&s).paginated());
        let mut b = schema(
            json!({"body": {"type": "object", "properties": {"at": {"type": "integer"}, "n": {"type": "integer"}}}}),
        );
        b[PAGINATION_HINT] = json!({"size": "body.n", "offset": "body.at"});
        assert!(analyze(&b).page_walkable());
    }

    #[test]
    fn types_and_bounds_are_read() {
        let a = analyze(&schema(
            json!({"id": {"type": ["integer", "null"], "minimum": 0}}),
        ));
        assert_eq!(a.params[0].ty.as_deref(), Some("integer"));
        assert_eq!(a.params[0].minimum, Some(0));
    }
}
