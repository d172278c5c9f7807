//! R1: `_filter` clauses `{field, op, value}`, ANDed. Used after the walk and fan-out (R2)
//! and by `queryToolResult` (G4). A path through an array matches when any element does;
//! an array at the end of the path is searched element by element too.

use crate::document::path::Path;
use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use serde_json::Value;
use std::cmp::Ordering;

pub const OPS: &[&str] = &[
    "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    Contains,
    In,
    Exists,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub field: Path,
    pub op: Op,
    pub value: Value,
}

/// Parses `_filter` (or `queryToolResult.filter`): a list of clauses, or one clause alone,
/// at most `limits.max_filter_clauses` of them (counted before any is parsed).
pub fn parse_filter(arg: &Value, name: &str, limits: &Limits) -> Result<Vec<Clause>, EngineError> {
    let list: Vec<&Value> = match arg {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![arg],
        Value::Null => Vec::new(),
        _ => {
            return Err(EngineError::invalid(format!(
                "`{name}` must be a list of clauses like [{{\"field\": \"status\", \"op\": \"eq\", \"value\": \"open\"}}]."
            )))
        }
    };
    if list.len() > limits.max_filter_clauses {
        return Err(too_many(
            &format!("`{name}`"),
            list.len(),
            limits.max_filter_clauses,
            "clauses",
        ));
    }
    list.into_iter()
        .enumerate()
        .map(|(i, c)| parse_clause(c, name, i, limits))
        .collect()
}

fn parse_clause(c: &Value, name: &str, i: usize, limits: &Limits) -> Result<Clause, EngineError> {
    let at = format!("`{name}[{i}]`");
    let Some(obj) = c.as_object() else {
        return Err(EngineError::invalid(format!(
            "{at} must be an object {{\"field\", \"op\", \"value\"}}."
        )));
    };
    let field = match obj.get("field").and_then(Value::as_str) {
        Some(f) => Path::parse_bounded(f, &format!("{at}.field"), limits)?,
        None => None,
    };
    let field = field.ok_or_else(|| {
        EngineError::invalid(format!(
            "{at}.field must be a dot-path string such as \"status\" or \"customer.name\"."
        ))
    })?;
    let op_name = obj.get("op").and_then(Value::as_str).unwrap_or("eq");
    let op = match op_name {
        "eq" | "==" => Op::Eq,
        "neq" | "!=" | "ne" => Op::Neq,
        "gt" | ">" => Op::Gt,
        "gte" | ">=" => Op::Gte,
        "lt" | "<" => Op::Lt,
        "lte" | "<=" => Op::Lte,
        "contains" => Op::Contains,
        "in" => Op::In,
        "exists" => Op::Exists,
        other => {
            return Err(EngineError::invalid(format!(
                "{at}.op \"{other}\" is not supported; use one of: {}.",
                OPS.join(", ")
            )))
        }
    };
    let value = obj.get("value").cloned().unwrap_or(match op {
        Op::Exists => Value::Bool(true),
        _ => Value::Null,
    });
    match (op, &value) {
        (Op::In, Value::Array(set)) if set.len() > limits.max_in_values => {
            return Err(too_many(
                &format!("{at}.value"),
                set.len(),
                limits.max_in_values,
                "values",
            ))
        }
        (Op::In, Value::Array(_)) | (Op::Exists, Value::Bool(_)) => {}
        (Op::In, _) => {
            return Err(EngineError::invalid(format!(
                "{at}: op \"in\" needs `value` to be a list, e.g. [\"open\", \"pending\"]."
            )))
        }
        (Op::Exists, _) => {
            return Err(EngineError::invalid(format!(
                "{at}: op \"exists\" takes `value` true (field present) or false (absent)."
            )))
        }
        (Op::Gt | Op::Gte | Op::Lt | Op::Lte, Value::Number(_) | Value::String(_)) => {}
        (Op::Gt | Op::Gte | Op::Lt | Op::Lte, _) => {
            return Err(EngineError::invalid(format!(
                "{at}: op \"{op_name}\" compares with a number or a string (dates as ISO 8601 strings)."
            )))
        }
        _ => {}
    }
    Ok(Clause { field, op, value })
}

impl Clause {
    /// Whether the clause holds for `item`.
    pub fn matches(&self, item: &Value) -> bool {
        self.matches_reached(&self.field.resolve(item))
    }

    /// [`Clause::matches`] on a row's raw text: only the values the path reaches are read.
    pub fn matches_raw(&self, row: &str) -> bool {
        // The common case, a scalar at the top level, without collecting anything.
        if let [key] = self.field.segments() {
            if crate::document::raw_scan::is_object(row) {
                match crate::document::raw_scan::get(row, key) {
                    None => return self.matches_reached(&[]),
                    Some(v) if !v.starts_with(['[', '{']) => {
                        if let Some(hit) = self.on_plain_string(v) {
                            return hit;
                        }
                        return self.matches_reached(&[&crate::document::raw_scan::leaf(v)]);
                    }
                    Some(_) => {}
                }
            }
        }
        let mut reached = Vec::new();
        crate::document::raw_scan::resolve(row, self.field.segments(), &mut reached);
        let values: Vec<Value> = reached
            .into_iter()
            .map(crate::document::raw_scan::leaf)
            .collect();
        let refs: Vec<&Value> = values.iter().collect();
        self.matches_reached(&refs)
    }

    /// String comparisons straight on a raw string without escapes (no allocation);
    /// None when the fast path does not apply.
    fn on_plain_string(&self, raw: &str) -> Option<bool> {
        let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            return None;
        }
        let Value::String(want) = &self.value else {
            return None;
        };
        match self.op {
            Op::Eq => Some(inner == want),
            Op::Neq => Some(inner != want),
            Op::Contains => Some(inner.contains(want.as_str())),
            _ => None,
        }
    }

    /// Whether the clause holds given every value its path reached in one item.
    pub fn matches_reached(&self, reached: &[&Value]) -> bool {
        if reached.iter().all(|v| !v.is_array()) {
            return self.test(reached, reached);
        }
        let mut leaves = Vec::with_capacity(reached.len());
        for v in reached {
            flatten(v, &mut leaves);
        }
        self.test(reached, &leaves)
    }

    /// The op over the values reached (`reached`) and their array elements (`leaves`).
    fn test(&self, reached: &[&Value], leaves: &[&Value]) -> bool {
        match self.op {
            Op::Exists => {
                let present = leaves.iter().any(|v| !v.is_null());
                present == self.value.as_bool().unwrap_or(true)
            }
            // neq is the negation of eq, so "labels neq spam" drops rows labelled spam.
            Op::Neq => !leaves.iter().any(|v| equal(v, &self.value)),
            Op::Eq => {
                // An array value compares whole too (`tags eq ["a","b"]`).
                reached.iter().any(|v| equal(v, &self.value))
                    || leaves.iter().any(|v| equal(v, &self.value))
            }
            Op::In => self
                .value
                .as_array()
                .is_some_and(|set| leaves.iter().any(|v| set.iter().any(|s| equal(v, s)))),
            Op::Contains => leaves.iter().any(|v| match (v, &self.value) {
                (Value::String(s), Value::String(needle)) => s.contains(needle.as_str()),
                _ => equal(v, &self.value),
            }),
            Op::Gt => leaves
                .iter()
                .any(|v| compare(v, &self.value) == Some(Ordering::Greater)),
            Op::Gte => leaves.iter().any(|v| {
                matches!(
                    compare(v, &self.value),
                    Some(Ordering::Greater | Ordering::Equal)
                )
            }),
            Op::Lt => leaves
                .iter()
                .any(|v| compare(v, &self.value) == Some(Ordering::Less)),
            Op::Lte => leaves.iter().any(|v| {
                matches!(
                    compare(v, &self.value),
                    Some(Ordering::Less | Ordering::Equal)
                )
            }),
        }
    }
}

/// Keeps items satisfying every clause.
pub fn keep(clauses: &[Clause], item: &Value) -> bool {
    clauses.iter().all(|c| c.matches(item))
}

fn flatten<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|e| flatten(e, out)),
        _ => out.push(v),
    }
}

/// Equality with numbers compared by value (1 == 1.0) and a numeric string equal to the
/// number it spells, because models and APIs disagree about quoting ids.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => a.as_f64() == b.as_f64(),
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            s.parse::<f64>().ok() == n.as_f64()
        }
        _ => a == b,
    }
}

/// Numbers numerically (numeric strings included), other strings lexically (ISO dates
/// sort correctly that way); anything else does not compare.
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match (a, b) {
        (Value::String(x), Value::String(y)) => match (num(a), num(b)) {
            (Some(p), Some(q)) => p.partial_cmp(&q),
            _ => Some(x.as_str().cmp(y.as_str())),
        },
        _ => num(a)?.partial_cmp(&num(b)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn clause(f: &str, op: &str, v: Value) -> Clause {
        let parsed = parse_filter(
            &json!([{"field": f, "op": op, "value": v}]),
            "_filter",
            &Limits::default(),
        );
        parsed
            .ok()
            .and_then(|mut c| c.pop())
            .unwrap_or_else(|| panic!("bad clause"))
    }

    #[test]
    fn r1_every_op() {
        let item = json!({"status": "open", "n": 5, "d": "2024-03-01", "tags": ["a", "b"],
                          "lines": [{"sku": "x1", "qty": 2}, {"sku": "y2", "qty": 9}], "z": null});
        let yes = [
            clause("status", "eq", json!("open")),
            clause("status", "neq", json!("closed")),
            clause("n", "gt", json!(4)),
            clause("n", "gte", json!(5)),
            clause("n", "lt", json!(6)),
            clause("n", "lte", json!(5)),
            clause("n", "eq", json!("5")),
            clause("d", "gte", json!("2024-01-01")),
            clause("status", "contains", json!("pe")),
            clause("tags", "contains", json!("b")),
            clause("status", "in", json!(["open", "pending"])),
            clause("status", "exists", json!(true)),
            clause("z", "exists", json!(false)),
            clause("missing", "exists", json!(false)),
            clause("lines.qty", "gt", json!(8)),
            clause("lines.sku", "eq", json!("y2")),
            clause("tags", "eq", json!(["a", "b"])),
            clause("tags", "neq", json!("c")),
        ];
        for c in &yes {
            assert!(c.matches(&item), "{c:?}");
        }
        let no = [
            clause("status", "eq", json!("closed")),
            clause("status", "neq", json!("open")),
            clause("n", "gt", json!(5)),
            clause("n", "lt", json!(5)),
            clause("lines.qty", "gt", json!(9)),
            clause("tags", "neq", json!("a")),
            clause("missing", "eq", json!(null)),
            clause("status", "in", json!(["closed"])),
            clause("status", "exists", json!(false)),
            clause("d", "lt", json!("2024-01-01")),
        ];
        for c in &no {
            assert!(!c.matches(&item), "{c:?}");
        }
    }

    #[test]
    fn r1_clauses_are_anded() {
        let f = parse_filter(
            &json!([{"field": "a", "op": "eq", "value": 1}, {"field": "b", "op": "eq", "value": 2}]),
            "_filter",
            &Limits::default(),
        )
        .unwrap_or_default();
        assert!(keep(&f, &json!({"a": 1, "b": 2})));
        assert!(!keep(&f, &json!({"a": 1, "b": 3})));
    }

    #[test]
    fn r1_clause_and_in_lists_are_bounded() {
        let l = Limits::default();
        let clauses: Vec<Value> = (0..10_000)
            .map(|i| json!({"field": format!("f{i}"), "op": "eq", "value": i}))
            .collect();
        let e = parse_filter(&json!(clauses), "_filter", &l).err();
        assert_eq!(
            e.as_ref().map(EngineError::code),
            Some("argument_limit_exceeded")
        );
        assert!(e.is_some_and(|e| e.detail().contains("10000 clauses")));
        let set: Vec<usize> = (0..50_000).collect();
        let e = parse_filter(
            &json!([{"field": "id", "op": "in", "value": set}]),
            "_filter",
            &l,
        )
        .err();
        assert!(e.is_some_and(|e| e.code() == "argument_limit_exceeded"
            && e.detail().contains("`_filter[0]`.value has 50000 values")));
    }

    #[test]
    fn r1_clear_errors() {
        let e = parse_filter(
            &json!([{"field": "a", "op": "like", "value": 1}]),
            "_filter",
            &Limits::default(),
        );
        let d = e.err().map(|e| e.detail().to_owned()).unwrap_or_default();
        assert!(
            d.contains("\"like\"") && d.contains("contains, in, exists"),
            "{d}"
        );
        assert!(parse_filter(
            &json!([{"field": "a", "op": "in", "value": 1}]),
            "_filter",
            &Limits::default()
        )
        .is_err());
        assert!(parse_filter(
            &json!([{"op": "eq", "value": 1}]),
            "_filter",
            &Limits::default()
        )
        .is_err());
        assert!(parse_filter(&json!("status=open"), "_filter", &Limits::default()).is_err());
        assert!(parse_filter(
            &json!([{"field": "a", "op": "gt", "value": {}}]),
            "_filter",
            &Limits::default()
        )
        .is_err());
    }
}
