//! What enters the conversation (result shapes: G3, P4). R2 order: `_filter`, then
//! `_fields`, then the size guard (G1). Envelope calls always carry `_resultId`; plain
//! calls keep the tool's own shape and gain `_truncated`/`_resultId` only when cut (G3).
//!
//! The result is written as JSON text: rows are copied (or projected) from the upstream's
//! text, never parsed into a tree, and the guard measures exactly what is written.

pub mod cache_label;
pub mod inputs;
pub mod rows;
pub mod size_guard;
pub mod template;

use crate::document::assemble::assemble_text;
use crate::document::Slot;
use crate::limits::Limits;
use crate::outcome::{Outcome, StopReason};
use crate::plan::CallPlan;
use crate::present::cache_label::CacheLabel;
use crate::present::rows::{shape, Row};
use crate::present::size_guard::{byte_budget, json_len, rows_that_fit, text_prefix};
use serde_json::{json, Map, Value};

/// The result as JSON text — the fast path; embed it with `serde_json::value::RawValue`.
#[derive(Debug, Clone, PartialEq)]
pub struct PresentedJson {
    pub json: String,
    /// Cut by the guard: the runtime marks the thread restricted (G5).
    pub truncated: bool,
    /// `result_id` appears in the result: the runtime must store `outcome.to_stored_json()`.
    pub stored: bool,
}

/// What the runtime knows about a call beyond its walk, written into the result by
/// [`present_json`] so the result text is final when it leaves the engine (and the guard
/// measures it): `_continue` (P10), `_cache` (C4), `_degraded`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels {
    pub continue_token: Option<String>,
    pub cache: Option<CacheLabel>,
    /// Why the result store was not shared (Redis unreachable).
    pub degraded: Option<String>,
}

impl Labels {
    /// Adds the labels at the end of a result object; a hit's note joins `_note`.
    fn apply(&self, m: &mut Map<String, Value>) {
        if let Some(extra) = self.cache.as_ref().and_then(CacheLabel::note) {
            let note = match m.get("_note").and_then(Value::as_str) {
                Some(n) if !n.is_empty() => format!("{n} {extra}"),
                _ => extra,
            };
            m.insert("_note".into(), Value::String(note));
        }
        if let Some(t) = &self.continue_token {
            m.insert("_continue".into(), json!(t));
        }
        if let Some(c) = &self.cache {
            m.insert("_cache".into(), c.value());
        }
        if let Some(d) = &self.degraded {
            m.insert("_degraded".into(), json!(d));
        }
    }
}

/// The result as a value (parsed from [`PresentedJson`]; tests and tools that need a tree).
#[derive(Debug, Clone, PartialEq)]
pub struct Presented {
    pub value: Value,
    pub truncated: bool,
    pub stored: bool,
}

pub fn present(outcome: &Outcome, plan: &CallPlan, result_id: &str, limits: &Limits) -> Presented {
    let p = present_json(outcome, plan, result_id, limits, &Labels::default());
    Presented {
        // Only rows nested past serde_json's recursion limit fail here; the model then
        // gets the same JSON as a string rather than nothing.
        value: serde_json::from_str(&p.json).unwrap_or_else(|_| Value::String(p.json.clone())),
        truncated: p.truncated,
        stored: p.stored,
    }
}

/// The final result text of a call: what the API sends as it is.
pub fn present_json(
    outcome: &Outcome,
    plan: &CallPlan,
    result_id: &str,
    limits: &Limits,
    labels: &Labels,
) -> PresentedJson {
    let budget = byte_budget(limits.token_budget);
    if outcome.envelope {
        envelope(outcome, plan, result_id, budget, labels)
    } else {
        plain(outcome, plan, result_id, budget, labels)
    }
}

/// The note of a result cut at a row boundary (G1). When not even one row fits (a
/// single huge item), rows are no way in: the note points at the stored text.
fn cut_note(shown: usize, total: usize, result_id: &str) -> String {
    if shown == 0 {
        return format!(
            "Not even one of the {total} rows fits here: a single row is larger than the whole budget. \
             It is stored; read it as text with fetchToolResult {{\"resultId\": \"{result_id}\", \"offset\": 0, \"length\": 20000}}, \
             or only some of its `fields` with queryToolResult {{\"resultId\": \"{result_id}\", \"fields\": [\"…\"], \"limit\": 1}}. \
             Do not answer from this preview alone."
        );
    }
    format!(
        "Showing the first {shown} of {total} rows: the whole result is larger than fits here. \
         It is stored; read further rows with queryToolResult {{\"resultId\": \"{result_id}\", \"offset\": {shown}, \"limit\": 100}}, \
         passing `fields` to keep rows small and `filter` to pick rows. Do not answer from this preview alone. \
         To use a field of every row as another call's values, pass {{\"fromResult\": \"{result_id}\", \"path\": \"<field>\"}} \
         in their place (e.g. as `_for_each.values`) instead of copying them."
    )
}

/// Writes the frame with as many leading rows as the budget allows. `meta(shown)` gives
/// the frame (its row slot `[]`) for a number of shown rows, `None` when nothing is cut.
/// Returns None when not even the frame fits.
fn fit(
    rows: &[Row<'_>],
    slot: &Slot,
    budget: usize,
    meta: &dyn Fn(Option<usize>) -> Value,
) -> Option<(String, usize)> {
    let n = rows.len();
    let lens = || rows.iter().map(Row::len);
    let frame = meta(None);
    let all = json_len(&frame) + lens().sum::<usize>() + n.saturating_sub(1);
    let (frame, k) = if all <= budget {
        (frame, n)
    } else {
        // Sized with the largest numbers a cut frame carries, so the real one only shrinks.
        let base_cut = json_len(&meta(Some(n)));
        if base_cut > budget {
            return None;
        }
        let k = rows_that_fit(lens(), budget - base_cut);
        (meta(Some(k)), k)
    };
    let shown = &rows[..k];
    let text = assemble_text(
        &frame,
        slot,
        shown.iter().map(Row::text),
        lens().take(k).sum(),
    );
    (text.len() <= budget).then_some((text, k))
}

fn envelope(
    outcome: &Outcome,
    plan: &CallPlan,
    result_id: &str,
    budget: usize,
    labels: &Labels,
) -> PresentedJson {
    let (mut rows, unmatched) = shape(&outcome.items, &plan.filter, plan.fields.as_ref());
    let n = rows.len();
    let v = &outcome.verdict;
    // E6: while a fan-out by reference has values left, its rows wait in the stored result:
    // forty continued calls showing the growing union would be read forty times over
    let withheld = v.stopped_by == Some(StopReason::Values) && outcome.resume.is_some();
    if withheld {
        rows.clear();
    }
    let errors = serde_json::to_value(&outcome.for_each_errors).unwrap_or(Value::Null);
    // `lean` drops the sample row and shortens the error list; `bare` keeps only counts
    // (in the note), for budgets too small for anything else.
    let build = |shown: Option<usize>, lean: bool, bare: bool| {
        let mut note = v.note.clone();
        if outcome.resume.is_some() {
            note.push_str(
                " To fetch the rest, call this tool again with the same arguments plus the `_continue` given here: \
                 the rows are added to this same `_resultId`.",
            );
        }
        if !plan.filter.is_empty() {
            note.push_str(&format!(
                " `_filter` kept {n} of {} fetched rows.",
                outcome.items.len()
            ));
        }
        if withheld {
            note.push_str(&format!(
                " The {n} rows so far are stored under `_resultId`, shown once every value is fetched."
            ));
        }
        if let Some(k) = shown {
            note.push(' ');
            note.push_str(&cut_note(k, n, result_id));
        }
        let mut m = v.envelope_head(n, note.trim());
        m.insert("_resultId".into(), json!(result_id));
        if withheld {
            m.insert("_itemsShown".into(), json!(0));
        }
        if let Some(k) = shown {
            m.insert("_truncated".into(), json!(true));
            m.insert("_itemsShown".into(), json!(k));
        }
        if let Some(u) = unmatched.as_ref().filter(|_| !bare) {
            let mut u = u.clone();
            if lean {
                if let Some(o) = u.as_object_mut() {
                    o.remove("sampleItem");
                }
            }
            m.insert("_unmatchedFields".into(), u);
        }
        if !outcome.for_each_errors.is_empty() && !bare {
            let e = match (&errors, lean) {
                // Lean: the first few, each message shortened; the note has the count.
                (Value::Array(a), true) => Value::Array(
                    a.iter()
                        .take(5)
                        .map(|e| {
                            let mut e = e.clone();
                            if let Some(Value::String(msg)) = e.get_mut("error") {
                                if msg.chars().count() > 160 {
                                    *msg =
                                        format!("{}…", msg.chars().take(160).collect::<String>());
                                }
                            }
                            e
                        })
                        .collect(),
                ),
                (e, _) => e.clone(),
            };
            m.insert("_forEachErrors".into(), e);
        }
        labels.apply(&mut m);
        Value::Object(m)
    };
    let slot = Slot::Key(vec!["items".into()]);
    let fitted = fit(&rows, &slot, budget, &|s| build(s, false, false))
        .or_else(|| fit(&rows, &slot, budget, &|s| build(s, true, false)))
        .or_else(|| fit(&rows, &slot, budget, &|s| build(s, true, true)));
    let (json, k) = fitted.unwrap_or_else(|| (build(Some(0), true, true).to_string(), 0));
    PresentedJson {
        json,
        truncated: k < rows.len(),
        stored: true,
    }
}

fn plain(
    outcome: &Outcome,
    plan: &CallPlan,
    result_id: &str,
    budget: usize,
    labels: &Labels,
) -> PresentedJson {
    let v = &outcome.verdict;
    // P7: a single page of a paginated tool says when the API reports more.
    let mut extras = Map::new();
    if plan.looping && plan.paginated && v.likely_more_rows {
        extras.insert("_likelyMoreRows".into(), json!(true));
        if let Some(t) = v.total {
            extras.insert("_total".into(), json!(t));
        }
        extras.insert("_note".into(), json!(v.note));
    }
    let Some(slot) = outcome.slot.as_ref().filter(|_| outcome.json) else {
        let mut value = outcome.frame.clone();
        if let Value::Object(m) = &mut value {
            m.extend(extras);
            labels.apply(m);
        }
        if json_len(&value) <= budget {
            return PresentedJson {
                json: value.to_string(),
                truncated: false,
                stored: false,
            };
        }
        return text_cut(outcome, result_id, budget, labels);
    };
    let rows: Vec<Row<'_>> = outcome.items.iter().map(Row::Raw).collect();
    let n = rows.len();
    let root = *slot == Slot::Root;
    // a top-level array has nowhere to carry labels: it stays the tool's own array
    if root && extras.is_empty() {
        // The tool's own top-level array, when it fits whole.
        let len = rows.iter().map(Row::len).sum::<usize>() + n + 1;
        if len <= budget {
            let text = assemble_text(&Value::Null, &Slot::Root, rows.iter().map(Row::text), len);
            return PresentedJson {
                json: text,
                truncated: false,
                stored: false,
            };
        }
    }
    let (frame, slot) = if root {
        (json!({"items": []}), Slot::Key(vec!["items".into()]))
    } else {
        (outcome.frame.clone(), slot.clone())
    };
    let meta = |shown: Option<usize>| {
        let mut f = frame.clone();
        if let Value::Object(m) = &mut f {
            for (k, x) in &extras {
                m.insert(k.clone(), x.clone());
            }
            if let Some(k) = shown {
                m.insert("_truncated".into(), json!(true));
                m.insert("_resultId".into(), json!(result_id));
                m.insert("_itemsShown".into(), json!(k));
                m.insert("_itemsTotal".into(), json!(n));
                let mut note = cut_note(k, n, result_id);
                if let Some(Value::String(p7)) = extras.get("_note") {
                    note = format!("{p7} {note}");
                }
                m.insert("_note".into(), json!(note));
            }
            labels.apply(m);
        }
        f
    };
    match fit(&rows, &slot, budget, &meta) {
        Some((json, k)) => PresentedJson {
            json,
            truncated: k < n,
            stored: k < n,
        },
        None => text_cut(outcome, result_id, budget, labels),
    }
}

/// G1/G2 with no usable rows: the first part of the stored text, then `fetchToolResult`.
fn text_cut(outcome: &Outcome, result_id: &str, budget: usize, labels: &Labels) -> PresentedJson {
    let text = match &outcome.frame {
        Value::String(s) if outcome.slot.is_none() => s.clone(),
        _ => outcome.to_stored_json(),
    };
    let total = text.chars().count();
    let meta = |shown: usize| {
        let mut v = json!({
            "text": "",
            "_truncated": true,
            "_resultId": result_id,
            "_totalChars": total,
            "_note": format!(
                "This result has no list of rows to cut at, so it was cut as text: the first {shown} of {total} characters are shown. \
                 Read the rest with fetchToolResult {{\"resultId\": \"{result_id}\", \"offset\": {shown}, \"length\": 20000}}. Do not answer from this preview alone."
            ),
        });
        if let Value::Object(m) = &mut v {
            labels.apply(m);
        }
        v
    };
    let base = json_len(&meta(total));
    let (prefix, shown) = text_prefix(&text, 0, total, budget.saturating_sub(base));
    let mut value = meta(shown);
    value["text"] = Value::String(prefix);
    PresentedJson {
        json: value.to_string(),
        truncated: true,
        stored: true,
    }
}
