//! L2, L4, L5, A1: what the model is shown. A looping binding's tool gains the reserved
//! arguments (`_filter` is accepted but deliberately not advertised: next to an API's real
//! filters a model would reach for it and fetch everything), the retrieval tools, and one
//! system message with the rules.

use crate::analysis::ToolAnalysis;
use serde_json::{json, Map, Value};

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The tool's schema and description for the model; unchanged when `looping` is off.
pub fn model_tool(
    name: &str,
    description: &str,
    input_schema: &Value,
    analysis: &ToolAnalysis,
    looping: bool,
) -> ModelTool {
    if !looping {
        return ModelTool {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: input_schema.clone(),
        };
    }
    let mut schema = match input_schema {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    schema.entry("type").or_insert_with(|| json!("object"));
    let props = schema.entry("properties").or_insert_with(|| json!({}));
    if !props.is_object() {
        *props = json!({});
    }
    if let Value::Object(p) = props {
        p.insert(
            "_fields".into(),
            json!({
                "type": "array",
                "items": {"type": "string"},
                "description": "Keep only these dot-paths of every row, e.g. [\"id\", \"customer.name\", \"lines.sku\"] (a path continues through lists). Applied every time it is given; the full rows stay stored under `_resultId`."
            }),
        );
        if analysis.paginated() {
            p.insert(
                "_all_pages".into(),
                json!({
                    "type": "boolean",
                    "description": "true: fetch every page inside this one call and return all rows merged, with `_pagingComplete` saying whether the set is whole. Use it before counting, ranking or summarising."
                }),
            );
        }
        let keys = analysis.param_names();
        p.insert(
            "_for_each".into(),
            json!({
                "type": "object",
                "description": "Run this tool once per value of one of its parameters and merge the rows; each row gets a field named after the parameter holding the value it came from. At most 50 distinct values. A stored result can be passed by reference instead of copying its values: `values` as {\"fromResult\": \"<_resultId>\", \"path\": \"id\"} uses that field of every stored row (beyond 50 values, continued with `_continue`).",
                "properties": {
                    "key": {"type": "string", "enum": keys, "description": "The parameter to vary."},
                    "values": {
                        "description": "The values to use, one call each: a list, or a reference to a stored result.",
                        "anyOf": [
                            {"type": "array", "items": {}, "maxItems": 50},
                            {"type": "object", "properties": {
                                "fromResult": {"type": "string", "description": "The `_resultId` of a result earlier in this conversation."},
                                "path": {"type": "string", "description": "The dot-path of the field of each row, e.g. \"id\" or \"customer.id\"."},
                                "filter": {"description": "Optional clauses {field, op, value} picking the rows, as queryToolResult's `filter`."}
                            }, "required": ["fromResult", "path"]}
                        ]
                    }
                },
                "required": ["key", "values"]
            }),
        );
        p.insert(
            "_continue".into(),
            json!({
                "type": "string",
                "description": "The `_continue` of an earlier result of this tool that stopped at a limit: fetches the rest and adds it to that same `_resultId`. Pass it with the same arguments, or alone."
            }),
        );
        p.insert(
            "_refresh".into(),
            json!({
                "type": "boolean",
                "description": "true: ignore any cached copy of this exact call and fetch fresh data."
            }),
        );
    }
    let mut desc = description.trim_end().to_owned();
    if !desc.is_empty() && !desc.ends_with('.') {
        desc.push('.');
    }
    if analysis.paginated() {
        desc.push_str(" This tool is paginated: one call returns one page unless you pass `_all_pages: true`, which fetches every page at once.");
    }
    desc.push_str(" Pass `_fields` to keep only the fields you need, and `_for_each` to run it for several values of one parameter in a single call.");
    desc.push_str(" A result that stopped at a limit carries `_continue`: call again with the same arguments plus that `_continue` to add the rest to the same `_resultId`.");
    desc.push_str(" To count, total, average or group its rows, call queryToolResult with `aggregate` on the `_resultId` instead of adding rows up yourself.");
    ModelTool {
        name: name.to_owned(),
        description: desc.trim_start().to_owned(),
        input_schema: Value::Object(schema),
    }
}

/// L4: `queryToolResult` and `fetchToolResult`.
pub fn retrieval_tools() -> Vec<ModelTool> {
    let clause = json!({
        "type": "object",
        "properties": {
            "field": {"type": "string", "description": "Dot-path of the field, e.g. \"status\" or \"customer.country\"."},
            "op": {"type": "string", "enum": ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists"]},
            "value": {"description": "Value to compare with; a list for \"in\"; true/false for \"exists\"."}
        },
        "required": ["field", "op"]
    });
    vec![
        ModelTool {
            name: "queryToolResult".into(),
            description: "Read rows of a stored tool result (given by its `_resultId`) without calling the API again. \
                          `filter` selects rows from the whole stored set before paging, so it may use fields you did not project; \
                          `fields` keeps only the listed dot-paths; `offset`/`limit` page through the matches. \
                          Returns {items, total, offset, limit, has_more}, where `total` counts every matching row. \
                          For counts, sums, averages, minimums and maximums (optionally per `group_by` value) pass `aggregate` instead of reading rows: \
                          it runs over every stored row matching `filter` and answers {aggregates, groups?, sound, note}, \
                          where `sound: false` means the stored set is partial and the figures are not totals."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resultId": {"type": "string", "description": "The `_resultId` of the stored result."},
                    "fields": {"type": "array", "items": {"type": "string"}, "description": "Dot-paths to keep on each row."},
                    "filter": {"type": "array", "items": clause, "description": "Clauses that must all hold."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0},
                    "limit": {"type": "integer", "minimum": 1, "default": 100},
                    "aggregate": {
                        "type": "object",
                        "description": "Compute over every matching stored row instead of returning rows. Paths are dot-paths; a path through a list reaches every element.",
                        "properties": {
                            "count": {"type": "boolean", "description": "true: count the matching rows."},
                            "sum": {"type": "array", "items": {"type": "string"}, "description": "Dot-paths to add up (numbers and numeric strings)."},
                            "avg": {"type": "array", "items": {"type": "string"}, "description": "Dot-paths to average."},
                            "min": {"type": "array", "items": {"type": "string"}, "description": "Dot-paths whose smallest value to report (text such as dates compares as text)."},
                            "max": {"type": "array", "items": {"type": "string"}, "description": "Dot-paths whose largest value to report."},
                            "group_by": {"type": "string", "description": "Dot-path to group by: the figures are also given per distinct value, largest groups first."}
                        }
                    }
                },
                "required": ["resultId"]
            }),
        },
        ModelTool {
            name: "fetchToolResult".into(),
            description: "Read a stored tool result as text, a slice at a time, for results that were cut without a list of rows. \
                          `offset` and `length` count characters. Returns {text, offset, length, totalChars, has_more}."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resultId": {"type": "string", "description": "The `_resultId` of the stored result."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0},
                    "length": {"type": "integer", "minimum": 1, "default": 20000}
                },
                "required": ["resultId"]
            }),
        },
    ]
}

/// A1: the system message for an agent holding looping tools.
pub fn loop_guidance() -> &'static str {
    "Some of your tools can fetch large collections for you. Rules for using them well:\n\
     1. Narrow first: use the tool's own filter and search parameters before fetching broadly.\n\
     2. Fetch everything before you count: never total, rank or average rows from one page. Pass `_all_pages: true` to get every page in one call.\n\
     3. Ask only for what you need: pass `_fields` with the dot-paths you will use, and `_for_each` to repeat a call over a list of ids instead of calling it many times; when the ids are in a stored result, pass `{\"fromResult\": <its _resultId>, \"path\": \"id\"}` as the values instead of copying them.\n\
     4. Read the verdict: if `_pagingComplete` is false or `_likelyMoreRows` is true, the rows are a partial set. Say so plainly, and present counts and sums as \"at least\" or \"in the rows retrieved\", never as totals.\n\
     5. When a result stopped at a limit and carries `_continue`, call the same tool again with the same arguments plus that `_continue` to fetch the rest into the same result, until `_pagingComplete` is true.\n\
     6. When a result says it was cut (`_truncated`), read the rest with queryToolResult (rows) or fetchToolResult (text) before answering.\n\
     7. To count, total, average or rank a stored result, call queryToolResult with `aggregate` (count, sum, avg, min, max, group_by) rather than adding up rows yourself; its figures are totals only when it answers `sound: true`.\n\
     8. Talk to the user about their data, not about these mechanics: never mention reserved arguments, result ids or paging to them."
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;

    fn schema(paged: bool) -> Value {
        let mut props = json!({"status": {"type": "string"}});
        if paged {
            props["per_page"] = json!({"type": "integer"});
            props["page"] = json!({"type": "integer"});
        }
        json!({"type": "object", "properties": props, "required": ["status"]})
    }

    #[test]
    fn l2_l5_reserved_arguments_are_advertised_except_filter() {
        let s = schema(true);
        let t = model_tool("list_orders", "List orders", &s, &analyze(&s), true);
        let props = t.input_schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for k in [
            "_fields",
            "_all_pages",
            "_for_each",
            "_refresh",
            "status",
            "page",
        ] {
            assert!(props.contains_key(k), "{k}");
        }
        assert!(!props.contains_key("_filter"));
        assert_eq!(t.input_schema["required"], json!(["status"]));
        assert!(t.description.starts_with("List orders."));
        assert!(
            t.description.contains("paginated") && t.description.contains("`_all_pages: true`")
        );
        assert!(t.description.contains("_fields") && t.description.contains("_for_each"));
        assert!(t.description.contains("`_continue`") && t.description.contains("`aggregate`"));
        assert!(props.contains_key("_continue"));
        // E6: the model is told, in one sentence, that a stored result can be passed by reference
        let fan = props["_for_each"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(
            fan.contains("passed by reference") && fan.contains("fromResult"),
            "{fan}"
        );
        assert_eq!(
            props["_for_each"]["properties"]["key"]["enum"],
            json!(["status", "per_page", "page"])
        );
    }

    #[test]
    fn l2_all_pages_only_where_pagination_is_detected() {
        let s = schema(false);
        let t = model_tool("get", "Get", &s, &analyze(&s), true);
        assert!(t.input_schema["properties"].get("_all_pages").is_none());
        assert!(t.input_schema["properties"].get("_fields").is_some());
        assert!(!t.description.contains("paginated"));
    }

    #[test]
    fn l1_not_looping_means_untouched() {
        let s = schema(true);
        let t = model_tool("list", "List", &s, &analyze(&s), false);
        assert_eq!((t.input_schema, t.description.as_str()), (s, "List"));
    }

    #[test]
    fn l4_a1_retrieval_tools_and_guidance() {
        let names: Vec<String> = retrieval_tools().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["queryToolResult", "fetchToolResult"]);
        let query = &retrieval_tools()[0];
        assert!(query.description.contains("`aggregate`"));
        assert!(
            query.input_schema["properties"]["aggregate"]["properties"]["group_by"].is_object()
        );
        let g = loop_guidance();
        for needle in [
            "own filter",
            "before you count",
            "_fields",
            "partial",
            "never mention",
            "`aggregate`",
            "sound: true",
            "`_continue`",
        ] {
            assert!(g.contains(needle), "{needle}");
        }
    }
}
