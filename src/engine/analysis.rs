//! P1 (and the schema half of P5): what a tool's input schema says about pagination and
//! about its parameters. Detection is by name only, at the top level or one level down in
//! the JSON request body (`body`), because imported OpenAPI tools put query parameters at
//! the top and body fields under `body`.

use serde_json::Value;

/// P1 spellings, compared exactly (APIs are consistent about case within one name).
pub const PAGE_SIZE_NAMES: &[&str] = &[
    "itemsPerPage",
    "items_per_page",
    "perPage",
    "per_page",
    "pageSize",
    "page_size",
    "maxResults",
    "max_results",
    "limit",
    "$top",
];
pub const PAGE_NUMBER_NAMES: &[&str] = &[
    "page",
    "pageNumber",
    "page_number",
    "pageIndex",
    "page_index",
];
pub const OFFSET_NAMES: &[&str] = &["offset", "skip", "$skip", "startIndex", "start_index"];
/// P5 cursor parameter spellings.
pub const CURSOR_NAMES: &[&str] = &[
    "cursor",
    "pageToken",
    "page_token",
    "after",
    "starting_after",
    "page[after]",
    "start_cursor",
    "next",
    "continuation",
    "continuationToken",
    "continuation_token",
    "nextToken",
    "next_token",
    "next_cursor",
    "$skiptoken",
    "skipToken",
    "pagination_token",
    "paginationToken",
    "page[cursor]",
    "marker",
];

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
    /// True when the parameter is a property of the `body` object.
    pub in_body: bool,
    /// Declared JSON type (`integer`, `string`, ...), when the schema says.
    pub ty: Option<String>,
    pub minimum: Option<i64>,
    pub maximum: Option<u64>,
    /// Declared `default`, used as the first page number of a walk.
    pub default: Option<Value>,
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

    /// Whether `_all_pages` is offered for this tool.
    pub fn paginated(&self) -> bool {
        self.page_walkable() || self.cursor_walkable()
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
    // OData's `$top`/`$skip`/`$skiptoken` arrive as `top`/`skip`/`skiptoken` from importers
    // that drop the `$`, so a leading `$` never decides a match.
    let same = |p: &Param, n: &str| p.name.trim_start_matches('$') == n.trim_start_matches('$');
    let find = |names: &[&str]| {
        // Top-level parameters win over body fields with the same name.
        names
            .iter()
            .find_map(|n| params.iter().find(|p| same(p, n) && !p.in_body))
            .or_else(|| {
                names
                    .iter()
                    .find_map(|n| params.iter().find(|p| same(p, n)))
            })
            .cloned()
    };
    ToolAnalysis {
        page_size: find(PAGE_SIZE_NAMES),
        page_number: find(PAGE_NUMBER_NAMES),
        offset: find(OFFSET_NAMES),
        cursor: find(CURSOR_NAMES),
        params,
    }
}

fn collect(schema: &Value, in_body: bool, out: &mut Vec<Param>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        if !in_body && name == "body" && prop.get("properties").is_some() {
            continue;
        }
        out.push(Param {
            name: name.clone(),
            in_body,
            ty: declared_type(prop),
            minimum: prop.get("minimum").and_then(Value::as_i64),
            maximum: prop.get("maximum").and_then(Value::as_u64),
            default: prop.get("default").cloned(),
        });
    }
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
    fn types_and_bounds_are_read() {
        let a = analyze(&schema(
            json!({"id": {"type": ["integer", "null"], "minimum": 0}}),
        ));
        assert_eq!(a.params[0].ty.as_deref(), Some("integer"));
        assert_eq!(a.params[0].minimum, Some(0));
    }
}
