//! The OpenAPI schema of a tool call's `arguments` (`POST …/tool-calls`): the tool's own
//! arguments plus the reserved ones the loop engine reads and strips before the upstream
//! request (LOOP_ENGINE L2–L3): `_all_pages` (P1–P6), `_fields` (F1–F4), `_for_each`
//! (E1–E5, and values by reference), `_filter` (R1–R2), `_continue` (P10) and `_refresh` (C4). Bounds are the
//! engine's defaults (`loopgate_engine::Limits`).

use serde_json::json;
use utoipa::openapi::schema::{Object, Schema};

/// The `arguments` schema: an object open to the tool's own arguments, with the reserved
/// ones described. (utoipa reads a schema only where it names a `type` or a composition,
/// and openapi-python-client only where a union's members are single types: every part
/// here is both, which the test below and the Python client's drift check hold.)
pub fn tool_call_arguments() -> Schema {
    let clause = json!({
        "type": "object",
        "description": "Keep rows where `field` (a dot-path; through an array it matches when any element does) compares with `value` by `op`.",
        "required": ["field", "op"],
        "properties": {
            "field": {"type": "string", "maxLength": 256},
            "op": {"type": "string", "enum": ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists"]},
            "value": {
                "description": "The value compared with; a list (at most 200) for `in`; `true`/`false` for `exists`.",
                "oneOf": [
                    {"type": "string"},
                    {"type": "number"},
                    {"type": "boolean"},
                    {"type": "array", "items": {"type": ["string", "number", "boolean"]}, "maxItems": 200}
                ]
            }
        }
    });
    let reference = json!({
        "type": "object",
        "description": "Values by reference: read server-side from a stored result of this thread.",
        "required": ["fromResult", "path"],
        "properties": {
            "fromResult": {"type": "string", "description": "The `_resultId` of a stored result of this thread."},
            "path": {"type": "string", "description": "The dot-path into each stored row, e.g. `id`."},
            "filter": clause
        }
    });
    let v = json!({
        "type": "object",
        "additionalProperties": true,
        "description": "The tool's own arguments (its `input_schema`), plus the reserved arguments below on a binding with `loop_responses: true` (LOOP_ENGINE L2). Reserved arguments are read by loopgate and never sent upstream (L3). A call that uses any of them answers the envelope `{items, _itemCount, _pagingComplete, _likelyMoreRows, _total?, _stoppedBy?, _note, _resultId, _continue?, _unmatchedFields?, _forEachErrors?, _cache?}`.",
        "properties": {
            "_all_pages": {
                "type": "boolean",
                "description": "true: walk every page inside this one call and merge the rows (P1–P5), within 20 pages per collection, 60 requests, 5,000 items, 24 MB and 60 s (`_stoppedBy` names the first bound hit). On a tool where no pagination was detected it is `400 all_pages_unsupported` (P6)."
            },
            "_fields": {
                "type": "array",
                "items": {"type": "string", "maxLength": 256},
                "maxItems": 100,
                "description": "Keep only these dot-paths of every row, e.g. `[\"id\", \"customer.name\", \"lines.sku\"]` (F1); paths that matched no row are reported in `_unmatchedFields` (F4). The full rows stay stored under `_resultId` (F3)."
            },
            "_for_each": {
                "type": "object",
                "description": "Call the tool once per value of its parameter `key` and merge the rows, each tagged with its value (E1); at most 50 distinct values (E2); a `key` that is not a parameter is `400 invalid_for_each_key` (E3); per-value failures go to `_forEachErrors` (E4).",
                "required": ["key", "values"],
                "properties": {
                    "key": {"type": "string", "description": "The parameter to vary."},
                    "values": {
                        "description": "The values, one call each (at most 500 sent, 50 distinct), or a reference to a stored result's rows.",
                        "oneOf": [{"type": "array", "items": {"type": ["string", "number", "boolean"]}, "maxItems": 500}, reference]
                    }
                }
            },
            "_filter": {
                "description": "Clauses ANDed over the merged rows, applied after the walk and the fan-out and before `_fields` (R1–R2); at most 20. Honoured on every looping binding, though not advertised to the model.",
                "oneOf": [{"type": "array", "items": clause, "maxItems": 20}, clause]
            },
            "_continue": {
                "type": "string",
                "description": "The `_continue` of an earlier result of this tool that stopped at a bound: fetches the rest under a fresh budget and grows the same `_resultId` (P10). Pass it with the same arguments."
            },
            "_refresh": {
                "type": "boolean",
                "description": "true: bypass the cache of complete walks and replace its entry with fresh data (C4)."
            }
        }
    });
    serde_json::from_value(v).unwrap_or_else(|_| Schema::Object(Object::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_read_whole() {
        let s = serde_json::to_value(tool_call_arguments()).unwrap();
        for k in [
            "_all_pages",
            "_fields",
            "_for_each",
            "_filter",
            "_continue",
            "_refresh",
        ] {
            assert!(s["properties"][k]["description"].is_string(), "{k}: {s}");
        }
        assert_eq!(s["additionalProperties"], true);
    }
}
