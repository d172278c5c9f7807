//! W1: `{"ref": "<JSONPath>"}` references, RFC 9535 JSONPath over the run document
//! `{"input": …, "steps": {<id>: <output>}}`, and W2's `if` conditions.

use serde_json::{json, Map, Value};
use serde_json_path::JsonPath;

use loopgate_engine::plan::row_filter;

/// Why a reference could not be resolved; the detail names the step and the ref.
#[derive(Debug, Clone, PartialEq)]
pub struct RefError(pub String);

/// The JSONPath of `{"ref": "…"}` (an object with exactly that one key), if `v` is one.
pub fn as_ref(v: &Value) -> Option<&str> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get("ref").and_then(Value::as_str),
        _ => None,
    }
}

/// Every value `path` selects in `doc`.
pub fn matches<'a>(step: &str, path: &str, doc: &'a Value) -> Result<Vec<&'a Value>, RefError> {
    let p = JsonPath::parse(path).map_err(|e| {
        RefError(format!(
            "step '{step}': ref \"{path}\" is not a valid JSONPath (RFC 9535): {e}"
        ))
    })?;
    Ok(p.query(doc).all())
}

/// The single value `path` selects: none or several is an error naming the step.
pub fn single(step: &str, path: &str, doc: &Value) -> Result<Value, RefError> {
    let found = matches(step, path, doc)?;
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(RefError(format!(
            "step '{step}': ref \"{path}\" matched nothing; an argument ref must match exactly one value"
        ))),
        many => Err(RefError(format!(
            "step '{step}': ref \"{path}\" matched {} values; an argument ref must match exactly one value \
             (use loop.for_each to run the tool once per value)",
            many.len()
        ))),
    }
}

/// Replaces every `{"ref": …}` anywhere in `v` with its single match.
pub fn resolve(step: &str, v: &Value, doc: &Value) -> Result<Value, RefError> {
    if let Some(path) = as_ref(v) {
        return single(step, path, doc);
    }
    Ok(match v {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, x) in m {
                out.insert(k.clone(), resolve(step, x, doc)?);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| resolve(step, x, doc))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// `for_each.values`: a literal list, or a ref taking every match (one match that is
/// itself a list gives its elements).
pub fn values(step: &str, v: &Value, doc: &Value) -> Result<Value, RefError> {
    let Some(path) = as_ref(v) else {
        return resolve(step, v, doc);
    };
    let found = matches(step, path, doc)?;
    Ok(match found.as_slice() {
        [Value::Array(a)] => Value::Array(a.clone()),
        all => Value::Array(all.iter().map(|x| (*x).clone()).collect()),
    })
}

/// W2 `if: {ref, op, value}` with the `_filter` ops; `Ok(None)` when it holds, else the
/// reason the step is skipped.
pub fn condition(step: &str, cond: &Value, doc: &Value) -> Result<Option<String>, RefError> {
    let path = cond.get("ref").and_then(Value::as_str).ok_or_else(|| {
        RefError(format!(
            "step '{step}': `if` must be {{\"ref\": \"<JSONPath>\", \"op\": \"eq\", \"value\": …}}"
        ))
    })?;
    let op = cond.get("op").cloned().unwrap_or(json!("eq"));
    let value = cond.get("value").cloned().unwrap_or(Value::Null);
    let found = matches(step, path, doc)?;
    // one match is compared as is; several like a path through an array (any matches)
    let subject = match found.as_slice() {
        [] => json!({}),
        [one] => json!({ "v": one }),
        many => json!({ "v": many }),
    };
    let clause = json!([{"field": "v", "op": op, "value": value}]);
    let clauses = row_filter::parse_filter(&clause, "if", &loopgate_engine::Limits::default())
        .map_err(|e| RefError(format!("step '{step}': `if`: {}", e.detail())))?;
    Ok((!row_filter::keep(&clauses, &subject)).then(|| {
        format!(
            "condition not met: {path} {} {value}",
            cond.get("op").and_then(Value::as_str).unwrap_or("eq")
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({"input": {"q": "x"}, "steps": {"fetch": {"items": [{"id": 1}, {"id": 2}], "_loop": {"complete": true}}}})
    }

    #[test]
    fn resolves_refs_anywhere() {
        let v =
            json!({"a": {"ref": "$.input.q"}, "b": [{"ref": "$.steps.fetch.items[0].id"}], "c": 3});
        assert_eq!(
            resolve("s", &v, &doc()).unwrap(),
            json!({"a": "x", "b": [1], "c": 3})
        );
    }

    #[test]
    fn argument_ref_needs_one_match() {
        let e = resolve(
            "two",
            &json!({"id": {"ref": "$.steps.fetch.items[*].id"}}),
            &doc(),
        )
        .unwrap_err();
        assert!(
            e.0.contains("step 'two'") && e.0.contains("matched 2 values"),
            "{e:?}"
        );
        assert!(resolve("two", &json!({"ref": "$.nope"}), &doc()).is_err());
        assert!(resolve("two", &json!({"ref": "$[bad"}), &doc()).is_err());
    }

    #[test]
    fn for_each_values_take_every_match() {
        let d = doc();
        assert_eq!(
            values("s", &json!({"ref": "$.steps.fetch.items[*].id"}), &d).unwrap(),
            json!([1, 2])
        );
        assert_eq!(values("s", &json!([5, 6]), &d).unwrap(), json!([5, 6]));
    }

    #[test]
    fn conditions_use_filter_ops() {
        let d = doc();
        let holds = json!({"ref": "$.steps.fetch._loop.complete", "op": "eq", "value": true});
        assert_eq!(condition("s", &holds, &d).unwrap(), None);
        let fails = json!({"ref": "$.steps.fetch._loop.complete", "op": "eq", "value": false});
        assert!(condition("s", &fails, &d).unwrap().is_some());
        let exists = json!({"ref": "$.steps.nope", "op": "exists", "value": true});
        assert!(condition("s", &exists, &d).unwrap().is_some());
    }
}
