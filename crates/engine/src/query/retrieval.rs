//! G4: the retrieval tools. `queryToolResult` pages through a stored result's rows (filter
//! on the full set first, then slice, then project), or with `aggregate` (Q1) answers
//! counts, sums, averages and extremes over every matching row, flagged `sound` only when
//! the stored walk was complete; `fetchToolResult` returns character slices of the stored
//! text for results without rows. All outputs pass the size guard.

use crate::document::item::Item;
use crate::error::EngineError;
use crate::limits::Limits;
use crate::outcome::{Outcome, Provenance};
use crate::plan::projection::Projection;
use crate::plan::row_filter::parse_filter;
use crate::present::rows::{filtered, projected, Row};
use crate::present::size_guard::{byte_budget, json_len, rows_that_fit, text_prefix};
use crate::query::aggregate::{aggregate, Spec};
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

/// `queryToolResult {resultId, fields?, filter?, offset?, limit?, aggregate?}` over a
/// stored payload, judged complete or not by what the payload itself says.
pub fn query_result(stored: &Value, args: &Value, limits: &Limits) -> Result<Value, EngineError> {
    query_outcome(&Outcome::from_stored(stored.clone()), None, args, limits)
}

/// Like [`query_result`], from the stored text (no full parse of the rows, and no copy:
/// the text becomes the rows' buffer). `provenance` is what was kept beside the result
/// ([`Outcome::provenance`]); without it a plain payload counts as complete.
pub fn query_result_json(
    stored: String,
    provenance: Option<&Provenance>,
    args: &Value,
    limits: &Limits,
) -> Result<Value, EngineError> {
    query_outcome(&Outcome::from_stored_text(stored), provenance, args, limits)
}

fn query_outcome(
    outcome: &Outcome,
    provenance: Option<&Provenance>,
    args: &Value,
    limits: &Limits,
) -> Result<Value, EngineError> {
    let tool = "queryToolResult";
    let spec = match args.get("aggregate") {
        None | Some(Value::Null) => None,
        Some(a) => Some(Spec::parse(a, limits)?),
    };
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
    if let Some(spec) = spec {
        let own = outcome.provenance();
        let prov = provenance.unwrap_or(&own);
        return Ok(aggregate_answer(
            &kept,
            &spec,
            prov,
            !filter.is_empty(),
            limits,
        ));
    }
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

/// Q1: `{aggregates, groups?, groupCount?, sound, note}`, cut to the size guard by
/// dropping the smallest groups.
fn aggregate_answer(
    rows: &[&Item],
    spec: &Spec,
    prov: &Provenance,
    filtered: bool,
    limits: &Limits,
) -> Value {
    let a = aggregate(rows, spec, limits);
    let which = if filtered {
        format!("the {} stored rows matching the filter", a.rows)
    } else {
        format!("all {} stored rows", a.rows)
    };
    let head = match prov.gap() {
        None => format!(
            "Sound: computed over {which}, and the stored walk fetched the whole set, so these are totals."
        ),
        Some(gap) => format!(
            "Not sound: the stored result is a partial set ({gap}), so these figures cover only {which}. \
             Present them as \"at least\" or \"in the rows retrieved\", never as totals.{}",
            if prov.resumable {
                " To complete the set, call the tool again with the `_continue` of its latest result, then aggregate again."
            } else {
                ""
            }
        ),
    };
    let build = |groups: Option<&[Value]>, extra: Option<String>| {
        let mut note = head.clone();
        for r in a.remarks.iter().chain(extra.as_ref()) {
            note.push(' ');
            note.push_str(r);
        }
        let mut v = json!({"aggregates": a.aggregates, "sound": prov.complete, "note": note});
        if let Some(g) = groups {
            v["groups"] = json!(g);
            v["groupCount"] = json!(a.group_count);
        }
        v
    };
    let budget = byte_budget(limits.token_budget);
    let Some(groups) = a.groups.as_deref() else {
        return build(None, None);
    };
    let mut shown = groups.len();
    loop {
        let extra = (shown < groups.len()).then(|| {
            format!("Only the {shown} largest groups fit here; filter to see the others.")
        });
        let v = build(groups.get(..shown), extra);
        if shown == 0 || json_len(&v) <= budget {
            return v;
        }
        shown = shown * 3 / 4;
    }
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

    fn envelope(complete: bool) -> Value {
        let items: Vec<Value> = (0..6)
            .map(|i| json!({"id": i, "amount": i * 10, "s": if i < 4 {"a"} else {"b"}}))
            .collect();
        json!({"items": items, "_itemCount": 6, "_pagingComplete": complete, "_likelyMoreRows": !complete,
               "_stoppedBy": if complete {"end"} else {"pages"}, "_total": if complete {6} else {40}, "_note": ""})
    }

    #[test]
    fn q1_aggregates_over_a_complete_stored_walk_are_sound() {
        let args = json!({"resultId": "r", "filter": [{"field": "id", "op": "gte", "value": 1}],
                          "aggregate": {"count": true, "sum": ["amount"], "avg": ["amount"], "group_by": "s"}});
        let r = query_result(&envelope(true), &args, &Limits::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            r["aggregates"],
            json!({"count": 5, "sum": {"amount": 150}, "avg": {"amount": 30}})
        );
        assert_eq!(
            r["groups"],
            json!([{"key": "a", "count": 3, "sum": {"amount": 60}, "avg": {"amount": 20}},
                                        {"key": "b", "count": 2, "sum": {"amount": 90}, "avg": {"amount": 45}}])
        );
        assert_eq!(
            (r["sound"].clone(), r["groupCount"].clone()),
            (json!(true), json!(2))
        );
        let note = r["note"].as_str().unwrap_or_default();
        assert!(
            note.starts_with("Sound") && note.contains("5 stored rows matching the filter"),
            "{note}"
        );
        assert!(r.get("items").is_none());
    }

    #[test]
    fn q1_a_partial_stored_walk_is_not_sound_and_says_why() {
        let args = json!({"aggregate": {"count": true}});
        let r = query_result(&envelope(false), &args, &Limits::default()).unwrap_or_default();
        assert_eq!(
            (r["aggregates"]["count"].clone(), r["sound"].clone()),
            (json!(6), json!(false))
        );
        let note = r["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("`pages` bound")
                && note.contains("reported 40 rows")
                && note.contains("at least"),
            "{note}"
        );
        // a plain payload cannot say it was one page of many: the kept provenance does
        let plain = serde_json::to_string(&stored()).unwrap_or_default();
        let prov = Provenance {
            complete: false,
            stopped_by: None,
            total: None,
            rows: 10,
            failed_values: 0,
            resumable: true,
            first_page_unknown: false,
        };
        let r = query_result_json(plain.clone(), Some(&prov), &args, &Limits::default())
            .unwrap_or_default();
        assert_eq!(
            (r["aggregates"]["count"].clone(), r["sound"].clone()),
            (json!(10), json!(false))
        );
        assert!(r["note"]
            .as_str()
            .unwrap_or_default()
            .contains("only one page"));
        let r =
            query_result_json(plain.clone(), None, &args, &Limits::default()).unwrap_or_default();
        assert_eq!(r["sound"], json!(true));
    }

    /// A stored result read back is held once — its text becomes the rows'
    /// buffer — so a query holds a little beyond it, not a second copy.
    #[test]
    fn g4_a_query_reads_the_stored_text_without_copying_it() {
        let row = format!(r#"{{"id":1,"body":"{}"}}"#, "x".repeat(10_000));
        let text = format!(r#"{{"data":[{}]}}"#, vec![row.as_str(); 400].join(","));
        let n = text.len() as isize;
        let mark = crate::testing::Mark::now();
        let r = query_result_json(text, None, &json!({"limit": 2}), &Limits::default());
        let used = mark.usage();
        assert_eq!(r.unwrap_or_default()["total"], json!(400));
        assert!(used.peak <= n / 20, "{used:?} for {n} bytes");
    }

    #[test]
    fn q1_aggregate_answer_passes_the_guard() {
        let rows: Vec<Value> = (0..400)
            .map(|i| json!({"k": format!("{i:0>60}"), "n": i}))
            .collect();
        let limits = Limits {
            token_budget: 1_000,
            aggregate_groups: 400,
            ..Limits::default()
        };
        let r = query_result(
            &json!(rows),
            &json!({"aggregate": {"sum": ["n"], "group_by": "k"}}),
            &limits,
        )
        .unwrap_or_default();
        let shown = r["groups"].as_array().map_or(0, Vec::len);
        assert!(shown > 0 && shown < 400, "{shown}");
        assert_eq!(r["groupCount"], json!(400));
        assert_eq!(r["aggregates"]["sum"]["n"], json!(79_800));
        assert!(json_len(&r) <= byte_budget(1_000));
        assert!(r["note"]
            .as_str()
            .unwrap_or_default()
            .contains("largest groups fit"));
        assert!(query_result(
            &json!(rows),
            &json!({"aggregate": {"sum": "n", "p": 1}}),
            &limits
        )
        .is_err());
    }

    #[test]
    fn g4_rowless_result_points_to_fetch() {
        let e = query_result(&json!({"a": 1}), &json!({}), &Limits::default()).err();
        assert!(e.is_some_and(|e| e.detail().contains("fetchToolResult")));
    }
}
