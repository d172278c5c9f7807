//! E6: values by reference. `{"fromResult": "<_resultId>", "path": "<path into each row>",
//! "filter"?: <R1 clause or clauses>}` stands, in `_for_each.values` or in place of any
//! array or scalar argument, for the values `path` reaches on the rows of a result stored
//! earlier in the same thread — so an agent never copies 2,000 ids out of one result and
//! into the next call.
//!
//! This module parses references, finds where a call's arguments hold them, and reads the
//! values out of a stored result's text. Fetching that text (and the G5/G6 rules that go
//! with it) is the runtime's job: the engine's `parse_call_resolved` only ever receives
//! plain values ([`Resolved`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::analysis::ToolAnalysis;
use crate::document::path::Path;
use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use crate::plan::row_filter::{parse_filter, Clause};

/// Most references one call may hold (each is one read of a stored result).
pub const MAX_REFERENCES: usize = 8;

/// Longest `fromResult` accepted (the runtime's ids are far shorter).
const MAX_ID_BYTES: usize = 200;

const KEYS: [&str; 3] = ["fromResult", "path", "filter"];

/// Where in a call's arguments a reference sits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "in", content = "name")]
pub enum RefSite {
    /// `_for_each.values`.
    ForEach,
    /// A top-level argument of the tool.
    Arg(String),
    /// A property of the tool's `body`.
    Body(String),
}

impl RefSite {
    /// How the model wrote the place (`_for_each.values`, `customer_id`, `body.ids`).
    pub fn label(&self) -> String {
        match self {
            Self::ForEach => "_for_each.values".to_owned(),
            Self::Arg(n) => n.clone(),
            Self::Body(n) => format!("body.{n}"),
        }
    }
}

/// One parsed reference.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRef {
    /// The `_resultId` the values are read from.
    pub result_id: String,
    pub path: Path,
    pub filter: Vec<Clause>,
    /// The reference as the model wrote it (two references are the same when this is).
    pub raw: Value,
}

/// The values each reference of a call stood for, read by the runtime.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub values: Vec<(RefSite, Vec<Value>)>,
}

impl Resolved {
    pub fn get(&self, site: &RefSite) -> Option<&[Value]> {
        self.values
            .iter()
            .find(|(s, _)| s == site)
            .map(|(_, v)| v.as_slice())
    }
}

/// `v` is written as a reference (an object with `fromResult`).
pub fn is_reference(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.contains_key("fromResult"))
}

impl ValueRef {
    /// Parses a reference written at `site`; every mistake is named with the fix.
    pub fn parse(v: &Value, site: &RefSite, limits: &Limits) -> Result<Self, EngineError> {
        let at = site.label();
        let shape = format!(
            "`{at}` as a reference must be {{\"fromResult\": \"<_resultId>\", \"path\": \"<field of each row, e.g. id or customer.id>\", \
             \"filter\"?: [{{\"field\": …, \"op\": …, \"value\": …}}]}}"
        );
        let m = v
            .as_object()
            .ok_or_else(|| EngineError::invalid(shape.clone()))?;
        if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(EngineError::invalid(format!(
                "{shape}; `{k}` is not one of its keys."
            )));
        }
        let result_id = match m.get("fromResult") {
            Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= MAX_ID_BYTES => {
                s.trim().to_owned()
            }
            _ => {
                return Err(EngineError::invalid(format!(
                    "{shape}: `fromResult` must be the `_resultId` string of an earlier result in this conversation."
                )))
            }
        };
        let Some(Value::String(written)) = m.get("path") else {
            return Err(EngineError::invalid(format!("{shape}: `path` is missing.")));
        };
        let path = parse_path(written, &at, limits)?;
        let filter = match m.get("filter") {
            None | Some(Value::Null) => Vec::new(),
            Some(f) => parse_filter(f, &format!("{at}.filter"), limits)?,
        };
        Ok(Self {
            result_id,
            path,
            filter,
            raw: v.clone(),
        })
    }
}

/// A dot-path (`customer.id`) or a JSONPath relative to the row (`$.customer.id`).
fn parse_path(written: &str, at: &str, limits: &Limits) -> Result<Path, EngineError> {
    let s = written.trim();
    let s = s
        .strip_prefix("$.")
        .or_else(|| s.strip_prefix('@'))
        .unwrap_or(s);
    let s = s.strip_prefix('.').unwrap_or(s);
    let bad = || {
        EngineError::invalid(format!(
            "`{at}.path` \"{written}\" is not a path into a row: write the field's dot-path, \
             e.g. \"id\" or \"customer.id\" (or \"$.customer.id\"); a path continues through lists."
        ))
    };
    if s.contains(['[', ']', '*', '?', '$']) {
        return Err(bad());
    }
    Path::parse_bounded(s, &format!("`{at}.path`"), limits)?.ok_or_else(bad)
}

/// Every reference a call's arguments hold: in `_for_each.values`, and in place of any
/// top-level or `body` argument that is not declared an object. At most
/// [`MAX_REFERENCES`].
pub fn references(
    args: &Value,
    analysis: &ToolAnalysis,
    limits: &Limits,
) -> Result<Vec<(RefSite, ValueRef)>, EngineError> {
    let Value::Object(m) = args else {
        return Ok(Vec::new());
    };
    let mut found: Vec<(RefSite, &Value)> = Vec::new();
    if let Some(v) = m.get("_for_each").and_then(|f| f.get("values")) {
        if is_reference(v) {
            found.push((RefSite::ForEach, v));
        }
    }
    let body = m.get("body").and_then(Value::as_object);
    for p in analysis
        .params
        .iter()
        .filter(|p| p.ty.as_deref() != Some("object"))
    {
        let (site, v) = match p.in_body {
            true => (
                RefSite::Body(p.name.clone()),
                body.and_then(|b| b.get(&p.name)),
            ),
            false => (RefSite::Arg(p.name.clone()), m.get(&p.name)),
        };
        if let Some(v) = v.filter(|v| is_reference(v)) {
            found.push((site, v));
        }
    }
    if found.len() > MAX_REFERENCES {
        return Err(too_many(
            "The arguments",
            found.len(),
            MAX_REFERENCES,
            "references to stored results",
        ));
    }
    found
        .into_iter()
        .map(|(site, v)| Ok((site.clone(), ValueRef::parse(v, &site, limits)?)))
        .collect()
}

/// Puts the values read for argument references in place (the fan-out's are taken by
/// `parse_for_each`): an argument declared an array takes them all, any other exactly
/// one. A reference nobody resolved is refused, so it never reaches the API.
pub(crate) fn substitute(
    args: &mut Map<String, Value>,
    analysis: &ToolAnalysis,
    resolved: &Resolved,
    limits: &Limits,
) -> Result<(), EngineError> {
    for (site, r) in references(&Value::Object(args.clone()), analysis, limits)? {
        let name = match &site {
            RefSite::ForEach => continue,
            RefSite::Arg(n) | RefSite::Body(n) => n.clone(),
        };
        let Some(values) = resolved.get(&site) else {
            return Err(EngineError::invalid(format!(
                "`{}` refers to the stored result {}, which could not be read here; pass the values themselves.",
                site.label(),
                r.result_id
            )));
        };
        let array = analysis
            .params
            .iter()
            .find(|p| p.name == name && p.in_body == matches!(site, RefSite::Body(_)))
            .is_some_and(|p| p.ty.as_deref() == Some("array"));
        let value = match (array, values) {
            (true, _) => Value::Array(values.to_vec()),
            (false, [one]) => one.clone(),
            (false, _) => {
                return Err(EngineError::invalid(format!(
                "`{}` takes one value, and its reference to {} gave {}: narrow it with `filter`, \
                     or pass the reference as `_for_each.values` to call the tool once per value.",
                site.label(),
                r.result_id,
                values.len()
            )))
            }
        };
        let slot = match site {
            RefSite::Body(_) => match args.get_mut("body") {
                Some(Value::Object(b)) => b,
                _ => continue,
            },
            _ => &mut *args,
        };
        slot.insert(name, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use serde_json::json;

    fn reference(v: Value) -> Result<ValueRef, EngineError> {
        ValueRef::parse(&v, &RefSite::ForEach, &Limits::default())
    }

    #[test]
    fn e6_a_bad_reference_is_explained() {
        for (bad, needle) in [
            (json!({"fromResult": "res_1"}), "`path` is missing"),
            (
                json!({"fromResult": 7, "path": "id"}),
                "`fromResult` must be",
            ),
            (
                json!({"fromResult": "res_1", "path": "items[*].id"}),
                "dot-path",
            ),
            (
                json!({"fromResult": "res_1", "path": "id", "where": 1}),
                "`where`",
            ),
            (
                json!({"fromResult": "res_1", "path": "id", "filter": 3}),
                "filter",
            ),
        ] {
            let e = reference(bad.clone()).err().map(|e| e.detail().to_owned());
            assert!(
                e.as_deref().is_some_and(|d| d.contains(needle)),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn e6_references_are_found_where_values_go_and_put_in_place() {
        let schema = json!({"type": "object", "properties": {
            "customer_id": {"type": "string"}, "ids": {"type": "array"},
            "opts": {"type": "object"},
            "body": {"type": "object", "properties": {"owner": {"type": "string"}}}}});
        let a = analyze(&schema);
        let r = json!({"fromResult": "res_1", "path": "id"});
        let args = json!({"customer_id": r, "ids": r, "opts": r, "body": {"owner": r},
            "_for_each": {"key": "customer_id", "values": r}});
        let found = references(&args, &a, &Limits::default()).unwrap();
        let sites: Vec<RefSite> = found.into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            sites,
            [
                RefSite::ForEach,
                RefSite::Arg("customer_id".into()),
                RefSite::Arg("ids".into()),
                RefSite::Body("owner".into())
            ],
            "an object argument is never a reference"
        );
        let mut m = json!({"customer_id": r, "ids": r, "body": {"owner": r}})
            .as_object()
            .cloned()
            .unwrap();
        let resolved = Resolved {
            values: vec![
                (RefSite::Arg("customer_id".into()), vec![json!("c1")]),
                (RefSite::Arg("ids".into()), vec![json!(1), json!(2)]),
                (RefSite::Body("owner".into()), vec![json!("o")]),
            ],
        };
        substitute(&mut m, &a, &resolved, &Limits::default()).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"customer_id": "c1", "ids": [1, 2], "body": {"owner": "o"}})
        );
        let mut two = json!({"customer_id": r}).as_object().cloned().unwrap();
        let many = Resolved {
            values: vec![(RefSite::Arg("customer_id".into()), vec![json!(1), json!(2)])],
        };
        let e = substitute(&mut two, &a, &many, &Limits::default()).unwrap_err();
        assert!(e.detail().contains("takes one value"), "{}", e.detail());
        let e = substitute(&mut two, &a, &Resolved::default(), &Limits::default()).unwrap_err();
        assert!(e.detail().contains("could not be read"), "{}", e.detail());
    }
}
