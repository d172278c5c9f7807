//! L3, E2, E3, P6: turning the model's arguments into a [`CallPlan`]. Reserved arguments
//! are validated with errors the model can act on and removed, so that only the tool's own
//! arguments can ever reach the upstream API.

pub mod model_tools;
pub mod projection;
pub mod row_filter;
pub mod value_ref;

use crate::analysis::{
    ToolAnalysis, CURSOR_NAMES, OFFSET_NAMES, PAGE_NUMBER_NAMES, PAGE_SIZE_NAMES,
};
use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use crate::plan::projection::Projection;
use crate::plan::row_filter::{parse_filter, Clause};
pub use crate::resume::ForEachError;
use crate::resume::Resume;
use serde_json::{json, Map, Value};
use value_ref::{RefSite, Resolved};

pub const RESERVED: &[&str] = &[
    "_fields",
    "_all_pages",
    "_for_each",
    "_filter",
    "_refresh",
    "_continue",
];

/// Longest `_continue` accepted (the runtime's tokens are far shorter).
const MAX_CONTINUE_BYTES: usize = 200;

/// E1: one call per value of parameter `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct ForEach {
    /// The parameter name as declared (without `body.`).
    pub key: String,
    pub in_body: bool,
    /// De-duplicated values, coerced to the declared type, in the order given.
    pub values: Vec<Value>,
    /// E2: values that could not be coerced; reported in `_forEachErrors`.
    pub rejected: Vec<ForEachError>,
    /// E6: the values came by reference: any number of them (up to `limits.items`), of
    /// which one call walks at most this many, the rest left for `_continue` (P10).
    pub per_call: Option<usize>,
}

/// What one tool call asks for, with the reserved arguments taken out.
#[derive(Debug, Clone, PartialEq)]
pub struct CallPlan {
    /// The tool's own arguments, exactly as they will be sent (plus the engine's paging).
    pub upstream_args: Map<String, Value>,
    pub fields: Option<Projection>,
    pub filter: Vec<Clause>,
    pub all_pages: bool,
    pub for_each: Option<ForEach>,
    pub refresh: bool,
    /// Any reserved argument was given: the result takes the envelope shape.
    pub uses_reserved: bool,
    /// The binding has `loop_responses` on (P7 notes, `_resultId` on envelopes).
    pub looping: bool,
    /// The tool has pagination parameters (P1/P5): a single page may not be everything.
    pub paginated: bool,
    /// P10: the `_continue` the model passed (opaque here; the runtime redeems it).
    pub continue_token: Option<String>,
    /// P10: where to resume, set by the runtime from the redeemed `_continue`.
    pub resume: Option<Resume>,
}

impl CallPlan {
    /// C1: what makes two calls the same walk — the upstream arguments, whether every page
    /// is wanted, and the fan-out key and sorted values. `_fields`, `_filter` and
    /// `_refresh` are left out on purpose: they only shape what is shown.
    pub fn cache_identity(&self) -> Value {
        let fan = self.for_each.as_ref().map(|f| {
            let mut vals: Vec<String> = f.values.iter().map(canonical).collect();
            vals.sort();
            json!({"key": f.key, "inBody": f.in_body, "values": vals})
        });
        json!({
            "args": canonical(&Value::Object(self.upstream_args.clone())),
            "allPages": self.all_pages,
            "forEach": fan,
        })
    }
}

/// Key-sorted compact JSON, so argument order never changes an identity.
pub(crate) fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).unwrap_or_default()
}

/// Validates and strips reserved arguments (L3). With looping off they are refused, so a
/// model that guesses them never leaks them upstream. A call holding references to stored
/// results (E6) is refused here: the runtime reads them and calls [`parse_call_resolved`].
pub fn parse_call(
    analysis: &ToolAnalysis,
    input_schema: &Value,
    args: Value,
    looping: bool,
    limits: &Limits,
) -> Result<CallPlan, EngineError> {
    parse_call_resolved(
        analysis,
        input_schema,
        args,
        looping,
        limits,
        &Resolved::default(),
    )
}

/// [`parse_call`] with the values the call's references to stored results stood for
/// (E6, read by the runtime: `value_ref::references` says where they are).
pub fn parse_call_resolved(
    analysis: &ToolAnalysis,
    _input_schema: &Value,
    args: Value,
    looping: bool,
    limits: &Limits,
    resolved: &Resolved,
) -> Result<CallPlan, EngineError> {
    let mut args = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => {
            return Err(EngineError::invalid(
                "Tool arguments must be a JSON object.",
            ))
        }
    };
    let mut reserved = Map::new();
    for name in RESERVED {
        if let Some(v) = args.remove(*name) {
            reserved.insert((*name).to_owned(), v);
        }
    }
    if !looping && !reserved.is_empty() {
        let names: Vec<&String> = reserved.keys().collect();
        return Err(EngineError::invalid(format!(
            "Arguments {names:?} are not available on this tool; call it with its own parameters only."
        )));
    }
    let fields = reserved
        .get("_fields")
        .map(|v| Projection::parse(v, "_fields", limits))
        .transpose()?;
    let filter = match reserved.get("_filter") {
        Some(v) => parse_filter(v, "_filter", limits)?,
        None => Vec::new(),
    };
    let all_pages = flag(&reserved, "_all_pages")?;
    let refresh = flag(&reserved, "_refresh")?;
    if all_pages && !analysis.paginated() {
        return Err(all_pages_unsupported(analysis));
    }
    let for_each = reserved
        .get("_for_each")
        .map(|v| parse_for_each(v, analysis, limits, resolved))
        .transpose()?;
    value_ref::substitute(&mut args, analysis, resolved, limits)?;
    let continue_token = match reserved.get("_continue") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= MAX_CONTINUE_BYTES => {
            Some(s.trim().to_owned())
        }
        Some(_) => {
            return Err(EngineError::invalid(
                "`_continue` must be the `_continue` string of an earlier result of this tool, passed back unchanged.",
            ))
        }
    };
    analysis.signature.whole_numbers(&mut args);
    analysis.signature.check(
        &args,
        &engine_filled(analysis, all_pages, for_each.as_ref()),
    )?;
    Ok(CallPlan {
        upstream_args: args,
        fields,
        filter,
        all_pages,
        for_each,
        refresh,
        uses_reserved: !reserved.is_empty(),
        looping,
        paginated: analysis.paginated(),
        continue_token,
        resume: None,
    })
}

/// The arguments the engine supplies itself: a walk's paging parameters and a fan-out's
/// key (a body field's: the `body`), so a schema requiring them does not refuse the call.
fn engine_filled<'a>(
    analysis: &'a ToolAnalysis,
    all_pages: bool,
    for_each: Option<&'a ForEach>,
) -> Vec<&'a str> {
    let top = |name: &'a str, in_body: bool| if in_body { "body" } else { name };
    let mut out = Vec::new();
    if all_pages {
        let roles = [
            &analysis.page_size,
            &analysis.page_number,
            &analysis.offset,
            &analysis.cursor,
        ];
        out.extend(roles.into_iter().flatten().map(|p| top(&p.name, p.in_body)));
    }
    if let Some(f) = for_each {
        out.push(top(&f.key, f.in_body));
    }
    out
}

fn flag(reserved: &Map<String, Value>, name: &str) -> Result<bool, EngineError> {
    match reserved.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
        Some(other) => Err(EngineError::invalid(format!(
            "`{name}` must be true or false, not {other}."
        ))),
    }
}

fn all_pages_unsupported(a: &ToolAnalysis) -> EngineError {
    let names = a.param_names();
    EngineError::AllPagesUnsupported {
        detail: format!(
            "`_all_pages` is not available: no pagination parameters were found on this tool. \
             Looked for a page-size parameter ({}) together with a page-number ({}) or offset ({}) \
             parameter, or a cursor parameter ({}), at the top level or inside `body`. \
             The tool's parameters are: {}. Call it without `_all_pages`; use its own filters to narrow the result.",
            PAGE_SIZE_NAMES.join(", "),
            PAGE_NUMBER_NAMES.join(", "),
            OFFSET_NAMES.join(", "),
            CURSOR_NAMES.join(", "),
            if names.is_empty() { "(none)".to_owned() } else { names.join(", ") },
        ),
    }
}

fn parse_for_each(
    v: &Value,
    a: &ToolAnalysis,
    limits: &Limits,
    resolved: &Resolved,
) -> Result<ForEach, EngineError> {
    let shape =
        "`_for_each` must be {\"key\": \"<parameter name>\", \"values\": [\"v1\", \"v2\", …]} \
         (or `values` as {\"fromResult\": \"<_resultId>\", \"path\": \"<field of each row>\"}).";
    let obj = v.as_object().ok_or_else(|| EngineError::invalid(shape))?;
    let key = obj
        .get("key")
        .and_then(Value::as_str)
        .ok_or_else(|| EngineError::invalid(shape))?;
    // E6: values by reference, read by the runtime
    let by_reference = obj.get("values").is_some_and(value_ref::is_reference);
    let values = match by_reference {
        true => resolved.get(&RefSite::ForEach).ok_or_else(|| {
            EngineError::invalid(
                "`_for_each.values` refers to a stored result, which could not be read here; pass the values themselves.",
            )
        })?,
        false => obj
            .get("values")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| EngineError::invalid(shape))?,
    };
    let (name, body) = match key.strip_prefix("body.") {
        Some(k) => (k, Some(true)),
        None => (key, None),
    };
    let param = a
        .params
        .iter()
        .find(|p| p.name == name && body.is_none_or(|b| b == p.in_body))
        .ok_or_else(|| EngineError::InvalidForEachKey {
            detail: format!(
                "`_for_each.key` \"{key}\" is not a parameter of this tool. Its parameters are: {}.",
                a.param_names().join(", ")
            ),
        })?;
    if values.is_empty() {
        return Err(EngineError::invalid(
            "`_for_each.values` is empty; give at least one value.",
        ));
    }
    // Counted before any per-value work; de-duplication is then linear (by canonical text).
    // E6: a reference was read within `limits.items` distinct values by the runtime.
    if !by_reference && values.len() > limits.max_for_each_raw {
        return Err(too_many(
            "`_for_each.values`",
            values.len(),
            limits.max_for_each_raw,
            "values",
        ));
    }
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    let distinct: Vec<&Value> = values
        .iter()
        .filter(|v| seen.insert(canonical(v)))
        .collect();
    if !by_reference && distinct.len() > limits.for_each_values {
        return Err(EngineError::invalid(format!(
            "`_for_each.values` has {} distinct values; at most {} are allowed per call. \
             Split them over several calls, or use the API's own filter parameters.",
            distinct.len(),
            limits.for_each_values
        )));
    }
    let mut out = ForEach {
        key: name.to_owned(),
        in_body: param.in_body,
        values: Vec::new(),
        rejected: Vec::new(),
        per_call: by_reference.then_some(limits.for_each_values),
    };
    let mut coerced = std::collections::HashSet::with_capacity(distinct.len());
    for v in distinct {
        match coerce(v, param.ty.as_deref()) {
            Ok(c) if coerced.insert(canonical(&c)) => out.values.push(c),
            Ok(_) => {}
            Err(error) => out.rejected.push(ForEachError {
                value: v.clone(),
                status: None,
                error,
            }),
        }
    }
    Ok(out)
}

/// E2: a value as the parameter's declared type.
pub fn coerce(v: &Value, ty: Option<&str>) -> Result<Value, String> {
    let fail = || format!("{v} cannot be used as {}", ty.unwrap_or("this parameter"));
    match (ty, v) {
        (None, _) => Ok(v.clone()),
        (Some("string"), Value::String(_)) => Ok(v.clone()),
        (Some("string"), Value::Number(_) | Value::Bool(_)) => Ok(Value::String(v.to_string())),
        (Some("integer"), Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(v.clone()),
        (Some("integer"), Value::Number(n)) => n
            .as_f64()
            .and_then(crate::analysis::signature::exact_integer)
            .map(|i| json!(i))
            .ok_or_else(fail),
        (Some("integer"), Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(|i| json!(i))
            .map_err(|_| fail()),
        (Some("number"), Value::Number(_)) => Ok(v.clone()),
        (Some("number"), Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(fail),
        (Some("boolean"), Value::Bool(_)) => Ok(v.clone()),
        (Some("boolean"), Value::String(s)) if s == "true" || s == "false" => {
            Ok(json!(s == "true"))
        }
        (Some("string" | "integer" | "number" | "boolean"), _) => Err(fail()),
        (Some(_), _) => Ok(v.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;

    fn tool() -> (ToolAnalysis, Value) {
        let schema = json!({"type": "object", "properties": {
            "property_id": {"type": "integer"},
            "status": {"type": "string"},
            "limit": {"type": "integer", "maximum": 50},
            "page": {"type": "integer"},
            "body": {"type": "object", "properties": {"owner": {"type": "string"}}}
        }});
        (analyze(&schema), schema)
    }

    fn plan(args: Value) -> Result<CallPlan, EngineError> {
        let (a, s) = tool();
        parse_call(&a, &s, args, true, &Limits::default())
    }

    #[test]
    fn l3_reserved_arguments_are_stripped() {
        let p = plan(json!({"status": "open", "_fields": ["id"], "_filter": [{"field": "a", "op": "eq", "value": 1}],
                            "_all_pages": true, "_refresh": true, "_for_each": {"key": "property_id", "values": [1]}}))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Value::Object(p.upstream_args.clone()),
            json!({"status": "open"})
        );
        assert!(
            p.all_pages
                && p.refresh
                && p.uses_reserved
                && p.fields.is_some()
                && p.filter.len() == 1
        );
        let plain = plan(json!({"status": "open"})).unwrap_or_else(|e| panic!("{e}"));
        assert!(!plain.uses_reserved);
    }

    #[test]
    fn l3_reserved_arguments_refused_when_not_looping() {
        let (a, s) = tool();
        let e = parse_call(
            &a,
            &s,
            json!({"_all_pages": true}),
            false,
            &Limits::default(),
        );
        assert_eq!(e.err().map(|e| e.code()), Some("invalid_arguments"));
        assert!(parse_call(&a, &s, json!({"status": "x"}), false, &Limits::default()).is_ok());
    }

    #[test]
    fn p6_all_pages_unsupported_names_what_was_looked_for() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let e = parse_call(
            &analyze(&schema),
            &schema,
            json!({"_all_pages": true}),
            true,
            &Limits::default(),
        )
        .err()
        .unwrap_or_else(|| panic!("expected error"));
        assert_eq!(e.code(), "all_pages_unsupported");
        for needle in ["per_page", "pageNumber", "offset", "cursor", "q"] {
            assert!(e.detail().contains(needle), "{needle} in {}", e.detail());
        }
        // `_all_pages: false` is harmless.
        assert!(parse_call(
            &analyze(&schema),
            &schema,
            json!({"_all_pages": false}),
            true,
            &Limits::default()
        )
        .is_ok());
    }

    #[test]
    fn e3_unknown_key_lists_real_parameters() {
        let e = plan(json!({"_for_each": {"key": "propertyId", "values": [1]}})).err();
        let e = e.unwrap_or_else(|| panic!("expected error"));
        assert_eq!(e.code(), "invalid_for_each_key");
        assert!(
            e.detail()
                .contains("property_id, status, limit, page, body.owner"),
            "{}",
            e.detail()
        );
        let body = plan(json!({"_for_each": {"key": "body.owner", "values": ["a"]}}));
        assert!(body.is_ok_and(|p| p.for_each.is_some_and(|f| f.in_body)));
    }

    #[test]
    fn e2_dedup_count_and_coerce() {
        let p =
            plan(json!({"_for_each": {"key": "property_id", "values": [1, "1", 2, 2, "x", 3.0]}}))
                .unwrap_or_else(|e| panic!("{e}"));
        let fe = p.for_each.unwrap_or_else(|| panic!("no fan-out"));
        assert_eq!(fe.values, [json!(1), json!(2), json!(3)]);
        assert_eq!(fe.rejected.len(), 1);
        assert_eq!(fe.rejected[0].value, json!("x"));
        let many: Vec<Value> = (0..51).map(|i| json!(i)).collect();
        let e = plan(json!({"_for_each": {"key": "property_id", "values": many}})).err();
        assert!(e.is_some_and(|e| e.code() == "invalid_arguments" && e.detail().contains("51 distinct")));
        // E2 + bounds: 40,000 raw values are refused by count, before any de-duplication
        let flood: Vec<Value> = (0..40_000).map(|i| json!(format!("v{i}"))).collect();
        let e = plan(json!({"_for_each": {"key": "property_id", "values": flood}})).err();
        assert!(e.is_some_and(|e| e.code() == "argument_limit_exceeded"
            && e.detail().contains("40000 values")
            && e.detail().contains("at most 500")));
        let dup: Vec<Value> = (0..60).map(|i| json!(i % 50)).collect();
        assert!(
            plan(json!({"_for_each": {"key": "property_id", "values": dup}})).is_ok(),
            "dedup before counting"
        );
        assert_eq!(coerce(&json!(5), Some("string")), Ok(json!("5")));
        assert_eq!(coerce(&json!("true"), Some("boolean")), Ok(json!(true)));
    }

    #[test]
    fn wrong_types_are_explained() {
        for bad in [
            json!({"_all_pages": 1}),
            json!({"_fields": "a..b"}),
            json!({"_for_each": ["a"]}),
            json!({"_for_each": {"key": "status", "values": []}}),
            json!({"_filter": 3}),
        ] {
            let e = plan(bad.clone()).err();
            assert_eq!(e.map(|e| e.code()), Some("invalid_arguments"), "{bad}");
        }
    }

    #[test]
    fn c1_cache_identity_ignores_presentation_and_order() {
        let a = plan(
            json!({"status": "open", "page": 1, "_fields": ["id"], "_for_each": {"key": "property_id", "values": [2, 1]}}),
        );
        let b = plan(
            json!({"page": 1, "status": "open", "_refresh": true, "_for_each": {"key": "property_id", "values": [1, 2]}}),
        );
        let c = plan(
            json!({"page": 1, "status": "closed", "_for_each": {"key": "property_id", "values": [1, 2]}}),
        );
        let id = |p: Result<CallPlan, EngineError>| p.map(|p| p.cache_identity()).ok();
        let (a, b, c) = (id(a), id(b), id(c));
        assert!(a.is_some() && a == b && a != c);
    }
}
