//! One workflow step: its arguments with refs resolved and `loop` translated into the
//! reserved arguments (W1), and its output shaped as W2 says — the tool's own payload
//! with the merged, filtered, projected items in place and the verdict under `_loop`.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::refs::{self, RefError};
use crate::call::workflow_tool::BoundRun;
use loopgate_engine::document::Page;
use loopgate_engine::plan::{row_filter, value_ref};
use loopgate_engine::{CacheLabel, Item, RefSite, Resolved, ValueRef};

/// A step as the run needs it.
pub struct Step<'a> {
    pub id: &'a str,
    pub tool: &'a str,
    pub input: Option<&'a Value>,
    pub looping: Option<&'a Map<String, Value>>,
    pub condition: Option<&'a Value>,
}

impl<'a> Step<'a> {
    pub fn parse(v: &'a Value) -> Step<'a> {
        Step {
            id: v.get("id").and_then(Value::as_str).unwrap_or_default(),
            tool: v.get("tool").and_then(Value::as_str).unwrap_or_default(),
            input: v.get("input"),
            looping: v.get("loop").and_then(Value::as_object),
            condition: v.get("if").filter(|c| !c.is_null()),
        }
    }

    /// The tool's arguments: `input` with refs resolved, plus the reserved arguments
    /// `loop` declares (`_all_pages`, `_fields`, `_for_each`, `_filter`).
    pub fn arguments(&self, doc: &Value) -> Result<Value, RefError> {
        let mut args = match self.input {
            Some(v) => match refs::resolve(self.id, v, doc)? {
                Value::Object(m) => m,
                _ => {
                    return Err(RefError(format!(
                        "step '{}': input must be an object of the tool's arguments",
                        self.id
                    )))
                }
            },
            None => Map::new(),
        };
        if let Some(l) = self.looping {
            if l.get("all_pages").and_then(Value::as_bool) == Some(true) {
                args.insert("_all_pages".into(), json!(true));
            }
            if let Some(f) = l.get("fields").filter(|v| !v.is_null()) {
                args.insert("_fields".into(), f.clone());
            }
            if let Some(f) = l.get("filter").filter(|v| !v.is_null()) {
                args.insert("_filter".into(), refs::resolve(self.id, f, doc)?);
            }
            if let Some(fe) = l.get("for_each").filter(|v| !v.is_null()) {
                let key = fe.get("key").cloned().unwrap_or(Value::Null);
                let values = match fe.get("values") {
                    Some(v) => refs::values(self.id, v, doc)?,
                    None => json!([]),
                };
                args.insert("_for_each".into(), json!({"key": key, "values": values}));
            }
        }
        Ok(Value::Object(args))
    }

    /// E6 in a workflow: `loop.for_each.values` as `{"fromResult": "<step id>", "path",
    /// "filter"?}` reads the values from the rows of an earlier step's output (the merged
    /// item array W2 puts in place, as filtered and projected there): workflows hand out no
    /// `_resultId` (W3), so the step id names the stored rows. Read here, the values reach
    /// the engine as a fan-out by reference, walked to the end within the step.
    pub fn referenced_values(&self, doc: &Value) -> Result<Resolved, RefError> {
        let Some(v) = self
            .looping
            .and_then(|l| l.get("for_each"))
            .and_then(|f| f.get("values"))
            .filter(|v| value_ref::is_reference(v))
        else {
            return Ok(Resolved::default());
        };
        let id = self.id;
        let limits = loopgate_engine::Limits::default();
        let r = ValueRef::parse(v, &RefSite::ForEach, &limits)
            .map_err(|e| RefError(format!("step '{id}': loop.for_each: {}", e.detail())))?;
        let Some(rows) = doc.get("steps").and_then(|s| s.get(&r.result_id)) else {
            return Err(RefError(format!(
                "step '{id}': loop.for_each.values.fromResult \"{}\" names no earlier step; \
                 in a workflow it names the id of a step that ran before this one",
                r.result_id
            )));
        };
        if rows.get("_skipped").is_some() || rows.get("_error").is_some() {
            return Err(RefError(format!(
                "step '{id}': loop.for_each.values.fromResult \"{}\" names a step that has no rows (skipped or failed)",
                r.result_id
            )));
        }
        let values = r
            .values_in(rows.to_string(), &limits)
            .map_err(|e| RefError(format!("step '{id}': loop.for_each: {}", e.detail())))?;
        Ok(Resolved {
            values: vec![(RefSite::ForEach, values)],
        })
    }

    /// W4: the step's own cache TTL, when it opts in.
    pub fn cache_ttl(&self) -> Option<Duration> {
        let minutes = self
            .looping?
            .get("cache")?
            .get("ttl_minutes")?
            .as_f64()
            .filter(|m| *m > 0.0)?;
        Some(Duration::from_secs_f64(minutes * 60.0))
    }
}

/// W2: the payload with the merged rows (filtered, then projected) in place, and on every
/// step `_loop` (plus `_forEachErrors`, `_cache` when they apply). A payload that is not
/// an object is wrapped: a list under `items`, a text body under `text`.
pub fn output(run: &BoundRun) -> Value {
    let (outcome, plan) = (&run.outcome, &run.plan);
    let mut items: Vec<Value> = outcome
        .items()
        .iter()
        .map(Item::to_value)
        .filter(|v| row_filter::keep(&plan.filter, v))
        .collect();
    if let Some(p) = &plan.fields {
        items = items.iter().map(|v| p.apply(v)).collect();
    }
    let count = items.len();
    // a fan-out over single objects has no item array of its own: the rows are the list
    let mut out = match (&outcome.slot, &plan.for_each) {
        (None, Some(_)) => json!({ "items": items }),
        (slot, _) => Page::assemble(&outcome.frame, slot.as_ref(), items),
    };
    out = match out {
        Value::Object(_) => out,
        Value::Array(_) => json!({ "items": out }),
        Value::String(_) if !outcome.json => json!({ "text": out }),
        other => json!({ "value": other }),
    };
    if let Value::Object(m) = &mut out {
        let v = &outcome.verdict;
        m.insert(
            "_loop".into(),
            json!({
                "complete": outcome.is_complete(),
                // upstream requests this step made: none when served from the cache
                "requests": if run.hit.is_some() { 0 } else { outcome.requests },
                "itemCount": count,
                "stoppedBy": v.stopped_by.map(|s| s.as_str()),
                "note": v.note,
            }),
        );
        if !outcome.for_each_errors.is_empty() {
            m.insert("_forEachErrors".into(), json!(outcome.for_each_errors));
        }
        if let Some((at, expires)) = run.hit {
            m.insert("_cache".into(), CacheLabel::hit(at, expires).value());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_becomes_reserved_arguments() {
        let v = json!({"id": "s", "tool": "t", "input": {"q": {"ref": "$.input.q"}},
            "loop": {"all_pages": true, "fields": ["id"], "filter": [{"field": "a", "op": "eq", "value": 1}],
                     "for_each": {"key": "id", "values": {"ref": "$.input.ids"}}, "cache": {"ttl_minutes": 5}}});
        let step = Step::parse(&v);
        let doc = json!({"input": {"q": "x", "ids": [1, 2]}, "steps": {}});
        assert_eq!(
            step.arguments(&doc).unwrap(),
            json!({"q": "x", "_all_pages": true, "_fields": ["id"],
                   "_filter": [{"field": "a", "op": "eq", "value": 1}],
                   "_for_each": {"key": "id", "values": [1, 2]}})
        );
        assert_eq!(step.cache_ttl(), Some(Duration::from_secs(300)));
        assert_eq!(step.referenced_values(&doc).unwrap(), Resolved::default());
        let plain = json!({"id": "p", "tool": "t"});
        let step = Step::parse(&plain);
        assert_eq!(step.arguments(&doc).unwrap(), json!({}));
        assert_eq!(step.cache_ttl(), None);
    }

    /// E6 in a workflow: `fromResult` names an earlier step; its rows give the values.
    #[test]
    fn e6_for_each_values_by_reference_read_an_earlier_steps_rows() {
        let v = json!({"id": "each", "tool": "t", "loop": {"for_each": {"key": "id",
            "values": {"fromResult": "list", "path": "id", "filter": {"field": "vip", "op": "eq", "value": true}}}}});
        let step = Step::parse(&v);
        let doc = json!({"input": {}, "steps": {"list": {"customers": [
            {"id": "c1", "vip": true}, {"id": "c2", "vip": false}, {"id": "c3", "vip": true}],
            "_loop": {"complete": true}}}});
        assert_eq!(
            step.referenced_values(&doc).unwrap(),
            Resolved {
                values: vec![(RefSite::ForEach, vec![json!("c1"), json!("c3")])]
            }
        );
        let args = step.arguments(&doc).unwrap();
        assert_eq!(
            args["_for_each"]["values"]["fromResult"], "list",
            "kept for the engine"
        );
        let missing = json!({"id": "each", "tool": "t", "loop": {"for_each": {"key": "id",
            "values": {"fromResult": "nope", "path": "id"}}}});
        let e = Step::parse(&missing).referenced_values(&doc).unwrap_err();
        assert!(e.0.contains("names no earlier step"), "{e:?}");
    }
}
