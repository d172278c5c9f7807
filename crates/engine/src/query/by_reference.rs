//! E6: the values a reference stands for, read out of a stored result's text — the rows a
//! walk kept ([`crate::outcome::Outcome::from_stored_text`]), `filter` applied as
//! `queryToolResult` applies it, `path` resolved on each. Parsing references is `plan`'s
//! (`plan::value_ref`); this reads a result, so it sits with the other questions asked of
//! one.

use std::collections::HashSet;

use serde_json::Value;

use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use crate::outcome::Outcome;
use crate::plan::value_ref::ValueRef;
use crate::present::rows::filtered;

fn canonical(v: &Value) -> String {
    crate::plan::canonical(v)
}

impl ValueRef {
    /// The distinct values `path` reaches on the stored rows `filter` keeps, in row order
    /// (a path ending on a list gives its elements; `null` gives nothing), at most
    /// `limits.items` of them: as many as one walk keeps rows (P3).
    pub fn values_in(&self, stored: String, limits: &Limits) -> Result<Vec<Value>, EngineError> {
        let outcome = Outcome::from_stored_text(stored);
        if outcome.items.is_empty() && outcome.slot.is_none() {
            return Err(EngineError::invalid(format!(
                "The stored result {} has no list of rows to read values from; pass the values themselves.",
                self.result_id
            )));
        }
        let rows = filtered(&outcome.items, &self.filter);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut reached_any = false;
        for row in &rows {
            let v = row.to_value();
            for found in self.path.resolve(&v) {
                let list = match found {
                    Value::Array(a) => a.as_slice(),
                    one => std::slice::from_ref(one),
                };
                for x in list.iter().filter(|x| !x.is_null()) {
                    reached_any = true;
                    if seen.insert(canonical(x)) {
                        if out.len() == limits.items {
                            return Err(too_many(
                                &format!("The reference to {}", self.result_id),
                                out.len() + 1,
                                limits.items,
                                "distinct values (or more)",
                            ));
                        }
                        out.push(x.clone());
                    }
                }
            }
        }
        if rows.is_empty() {
            return Err(EngineError::invalid(format!(
                "The reference's `filter` kept none of the {} rows of {}; loosen it or check its fields with queryToolResult.",
                outcome.items.len(),
                self.result_id
            )));
        }
        if !reached_any {
            let keys = rows.first().map(|r| r.top_keys()).unwrap_or_default();
            return Err(EngineError::invalid(format!(
                "The reference's `path` \"{}\" reached no value on the {} rows of {}; the rows' fields are: {}.",
                self.path,
                rows.len(),
                self.result_id,
                keys.join(", ")
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::value_ref::RefSite;
    use serde_json::json;

    fn stored(rows: Vec<Value>) -> String {
        json!({"data": rows, "total": 9}).to_string()
    }

    fn reference(v: Value) -> Result<ValueRef, EngineError> {
        ValueRef::parse(&v, &RefSite::ForEach, &Limits::default())
    }

    #[test]
    fn e6_values_are_read_in_row_order_distinct_and_filtered() {
        let rows = vec![
            json!({"id": 3, "tier": "gold", "tags": ["a", "b"]}),
            json!({"id": 1, "tier": "free", "tags": ["b"]}),
            json!({"id": 3, "tier": "gold", "tags": null}),
            json!({"id": 2, "tier": "gold"}),
        ];
        let r = reference(json!({"fromResult": "res_1", "path": "id"})).unwrap();
        let v = r.values_in(stored(rows.clone()), &Limits::default());
        assert_eq!(v.unwrap(), [json!(3), json!(1), json!(2)]);
        let gold = reference(json!({"fromResult": "res_1", "path": "$.id",
            "filter": {"field": "tier", "op": "eq", "value": "gold"}}))
        .unwrap();
        let v = gold.values_in(stored(rows.clone()), &Limits::default());
        assert_eq!(v.unwrap(), [json!(3), json!(2)]);
        let tags = reference(json!({"fromResult": "res_1", "path": "tags"})).unwrap();
        let v = tags.values_in(stored(rows), &Limits::default());
        assert_eq!(
            v.unwrap(),
            [json!("a"), json!("b")],
            "a list gives its elements"
        );
    }

    #[test]
    fn e6_a_reference_that_reaches_nothing_is_explained() {
        let rows = vec![json!({"id": 1, "name": "a"})];
        let nothing = reference(json!({"fromResult": "res_1", "path": "ident"})).unwrap();
        let e = nothing
            .values_in(stored(rows.clone()), &Limits::default())
            .unwrap_err();
        assert!(e.detail().contains("id, name"), "{}", e.detail());
        let none = reference(json!({"fromResult": "res_1", "path": "id",
            "filter": [{"field": "name", "op": "eq", "value": "zz"}]}))
        .unwrap();
        let e = none
            .values_in(stored(rows), &Limits::default())
            .unwrap_err();
        assert!(
            e.detail().contains("kept none of the 1 rows"),
            "{}",
            e.detail()
        );
    }
}
