//! G4: the retrieval tools. `queryToolResult` pages through a stored result's rows (filter
//! on the full set first, then slice, then project); `fetchToolResult` returns character
//! slices of the stored text for results without rows. Both outputs pass the size guard.

use crate::engine::error::EngineError;
use crate::engine::fields::Projection;
use crate::engine::filter::parse_filter;
use crate::engine::guard::{byte_budget, json_len, rows_that_fit, text_prefix};
use crate::engine::limits::Limits;
use crate::engine::outcome::Outcome;
use crate::engine::rows::{filtered, projected, Row};
use serde_json::{json, Value};

pub const DEFAULT_QUERY_LIMIT: usize = 100;
pub const DEFAULT_FETCH_LENGTH: usize = 20_000;

fn arg_usize(args: &Value, name: &str, default: usize, tool: &str) -> Result<usize, EngineError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .ok_or_else(|| {
                EngineError::invalid(format!("`{tool}.{name}` must be a non-negative integer."))
            }),
    }
}

/// `queryToolResult {resultId, fields?, filter?, offset?, limit?}` over a stored payload.
pub fn query_result(stored: &Value, args: &Value, limits: &Limits) -> Result<Value, EngineError> {
    query_outcome(&Outcome::from_stored(stored.clone()), args, limits)
}

/// Like [`query_result`], from the stored text (no full parse of the rows).
pub fn query_result_json(
    stored: &str,
    args: &Value,
    limits: &Limits,
) -> Result<Value, EngineError> {
    query_outcome(&Outcome::from_stored_json(stored), args, limits)
}

fn query_outcome(outcome: &Outcome, args: &Value, limits: &Limits) -> Result<Value, EngineError> {
    let tool = "queryToolResult";
    let fields = match args.get("fields") {
        None | Some(Value::Null) => None,
        Some(f) => Some(Projection::parse(f, "fields", limits)?),
    };
    let filter = match args.get("filter") {
        None => Vec::new(),
        Some(f) => parse_filter(f, "filter", limits)?,
    };
    let offset = arg_usize(args, "offset", 0, tool)?;
    let limit = arg_usize(args, "limit", DEFAULT_QUERY_LIMIT, tool)?.max(1);
    if outcome.items.is_empty() && outcome.slot.is_none() {
        return Err(EngineError::invalid(
            "This stored result has no list of rows to query; read it with fetchToolResult {resultId, offset, length} instead.",
        ));
    }
    let kept = filtered(&outcome.items, &filter);
    let total = kept.len();
    let page: Vec<_> = kept.into_iter().skip(offset).take(limit).collect();
    let rows = projected(page, fields.as_ref(), None);
    let budget = byte_budget(limits.token_budget);
    let build = |items: Vec<Value>, cut: Option<usize>| {
        let shown = items.len();
        let mut v = json!({
            "items": items,
            "total": total,
            "offset": offset,
            "limit": limit,
            "has_more": offset + shown < total,
        });
        if let Some(n) = cut {
            v["_truncated"] = json!(true);
            v["_note"] = json!(format!(
                "Only {shown} of the {n} requested rows fit here; continue with offset {} (and `fields` to keep rows small).",
                offset + shown
            ));
        }
        v
    };
    let all =
        json_len(&build(Vec::new(), None)) + rows.iter().map(Row::len).sum::<usize>() + rows.len();
    if all <= budget {
        let v = build(rows.iter().map(Row::to_value).collect(), None);
        if json_len(&v) <= budget {
            return Ok(v);
        }
    }
    // Cut on the rows' exact text sizes first, so only the rows shown are parsed; the
    // parsed values are then re-measured (a number can re-serialise longer).
    let base = json_len(&build(Vec::new(), Some(rows.len()))) + 20;
    let k = rows_that_fit(rows.iter().map(Row::len), budget.saturating_sub(base));
    let mut values: Vec<Value> = rows[..k].iter().map(Row::to_value).collect();
    let mut v = build(values.clone(), Some(rows.len()));
    while json_len(&v) > budget && !values.is_empty() {
        values.pop();
        v = build(values.clone(), Some(rows.len()));
    }
    Ok(v)
}

/// `fetchToolResult {resultId, offset, length}` over the stored text. Offsets and lengths
/// count characters, so a slice never splits one.
pub fn fetch_result(
    stored_text: &str,
    args: &Value,
    limits: &Limits,
) -> Result<Value, EngineError> {
    let tool = "fetchToolResult";
    // A stored text body is kept as a JSON string; slice the text itself, as the cut did.
    let unwrapped: Option<String> = stored_text
        .trim_start()
        .starts_with('"')
        .then(|| serde_json::from_str(stored_text).ok())
        .flatten();
    let text = unwrapped.as_deref().unwrap_or(stored_text);
    let offset = arg_usize(args, "offset", 0, tool)?;
    let length = arg_usize(args, "length", DEFAULT_FETCH_LENGTH, tool)?;
    let total = text.chars().count();
    if offset > total {
        return Err(EngineError::invalid(format!(
            "`{tool}.offset` {offset} is past the end: the stored result has {total} characters."
        )));
    }
    let budget = byte_budget(limits.token_budget);
    let frame = json!({"text": "", "offset": offset, "length": length, "totalChars": total, "has_more": true});
    let (slice, taken) = text_prefix(
        text,
        offset,
        length,
        budget.saturating_sub(json_len(&frame)),
    );
    Ok(json!({
        "text": slice,
        "offset": offset,
        "length": taken,
        "totalChars": total,
        "has_more": offset + taken < total,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> Value {
        let items: Vec<Value> = (0..10).map(|i| json!({"id": i, "status": if i % 2 == 0 {"open"} else {"closed"}, "x": {"y": i}})).collect();
        json!({"data": items, "total": 10})
    }

    #[test]
    fn g4_filter_runs_before_paging_on_unprojected_fields() {
        let args = json!({"resultId": "r", "filter": [{"field": "status", "op": "eq", "value": "open"}],
                          "fields": ["id"], "offset": 1, "limit": 2});
        let r =
            query_result(&stored(), &args, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r["items"], json!([{"id": 2}, {"id": 4}]));
        assert_eq!(
            (r["total"].clone(), r["has_more"].clone()),
            (json!(5), json!(true))
        );
        let last =
            query_result(&stored(), &json!({"offset": 8}), &Limits::default()).unwrap_or_default();
        assert_eq!(last["items"].as_array().map(Vec::len), Some(2));
        assert_eq!(last["has_more"], json!(false));
    }

    #[test]
    fn g4_query_output_passes_the_guard() {
        let big: Vec<Value> = (0..500)
            .map(|i| json!({"id": i, "pad": "x".repeat(100)}))
            .collect();
        let limits = Limits {
            token_budget: 1_000,
            ..Limits::default()
        };
        let r = query_result(&json!(big), &json!({"limit": 500}), &limits).unwrap_or_default();
        let n = r["items"].as_array().map_or(0, Vec::len);
        assert!(n > 0 && n < 500);
        assert!(json_len(&r) <= byte_budget(1_000));
        assert_eq!(r["has_more"], json!(true));
        assert_eq!(r["_truncated"], json!(true));
    }

    #[test]
    fn g4_fetch_slices_chars() {
        let text = serde_json::to_string(&json!("héllo wörld")).unwrap_or_default();
        let r = fetch_result(
            &text,
            &json!({"offset": 1, "length": 4}),
            &Limits::default(),
        )
        .unwrap_or_default();
        assert_eq!(
            r,
            json!({"text": "éllo", "offset": 1, "length": 4, "totalChars": 11, "has_more": true})
        );
        let r = fetch_result("{\"a\":1}", &json!({"offset": 0}), &Limits::default())
            .unwrap_or_default();
        assert_eq!(
            (r["text"].clone(), r["has_more"].clone()),
            (json!("{\"a\":1}"), json!(false))
        );
        assert!(fetch_result("abc", &json!({"offset": 9}), &Limits::default()).is_err());
        assert!(fetch_result("abc", &json!({"offset": -1}), &Limits::default()).is_err());
    }

    #[test]
    fn g4_rowless_result_points_to_fetch() {
        let e = query_result(&json!({"a": 1}), &json!({}), &Limits::default()).err();
        assert!(e.is_some_and(|e| e.detail().contains("fetchToolResult")));
    }
}
