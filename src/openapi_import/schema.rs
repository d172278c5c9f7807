//! Turns an OpenAPI schema into a self-contained JSON Schema: local `$ref`s
//! inlined, OpenAPI-only keywords translated or dropped.
//!
//! - `$ref` is replaced by its target, recursively. A schema that refers to itself
//!   (a tree node, a linked list) is expanded [`RECURSION_DEPTH`] times along one
//!   branch; the next occurrence becomes a stub
//!   `{"type": <the target's type, when it has one>, "description": "(recursive
//!   reference to 'Node'; not expanded further)"}`.
//! - Size is bounded per operation: an [`Inliner`] has a node budget and a limit on
//!   how many `$ref`s may be open along one branch. The caller first tries the
//!   deepest limit and, when the budget runs out, starts over with a shallower one
//!   (see [`NESTING_LEVELS`]), so a big schema graph is cut evenly at one depth
//!   rather than expanded deep on its first branch and not at all on the others.
//!   Refs beyond the limit become stubs "('Name' not expanded: schema too large)".
//!   A document built to explode (every schema referring to every other) stays
//!   bounded; inline (non-`$ref`) content is always kept.
//! - Siblings of `$ref` (3.1 allows them; many 3.0 documents use them anyway, mostly
//!   for a `description`) are merged: annotations (`description`, `title`, `default`,
//!   `example(s)`, `deprecated`, `readOnly`, `writeOnly`) override the target's; other
//!   keywords are added when the target lacks them, else the result is
//!   `{"allOf": [target, siblings]}`. `nullable: true` next to a `$ref` makes the
//!   result nullable.
//! - 3.0 `nullable: true` becomes `type: [T, "null"]`; 3.0 boolean
//!   `exclusiveMinimum`/`exclusiveMaximum` become the numeric 2020-12 form;
//!   `discriminator`, `xml` and `externalDocs` (OpenAPI-only, and `discriminator`
//!   would point into components that are not carried along) are dropped.
//! - In a request body, properties marked `readOnly: true` are removed (and from
//!   `required`): the server sets them, the model should not try.

use serde_json::{Map, Value};

use super::error::{ImportError, Loc};
use super::refs;

/// How many times one schema may be expanded inside itself along one branch.
pub(crate) const RECURSION_DEPTH: usize = 2;
/// The limits on open `$ref`s along one branch, tried in order until the
/// operation's schema fits its node budget; the last one always fits (every
/// reference becomes a stub).
pub(crate) const NESTING_LEVELS: &[usize] = &[24, 8, 5, 3, 2, 1, 0];
/// Nesting depth of the produced schema; a guard for the stack.
const MAX_DEPTH: usize = 64;

const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "example",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Inlines schemas for one operation; the node budget is per instance.
pub(crate) struct Inliner<'d> {
    doc: &'d Value,
    stack: Vec<&'d str>,
    nodes: usize,
    max_nesting: usize,
    deepest: usize,
    budget: usize,
    exceeded: bool,
}

impl<'d> Inliner<'d> {
    /// An inliner that opens at most `max_nesting` references along a branch and
    /// stops expanding references after `budget` schema nodes.
    pub(crate) fn new(doc: &'d Value, max_nesting: usize, budget: usize) -> Self {
        Self {
            doc,
            stack: Vec::new(),
            nodes: 0,
            max_nesting,
            deepest: 0,
            budget,
            exceeded: false,
        }
    }

    /// Whether the budget ran out, i.e. some reference was cut for size.
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded
    }

    /// The most references that were open at once; a `max_nesting` at or above
    /// it would have produced the same schema.
    pub(crate) fn deepest(&self) -> usize {
        self.deepest
    }

    /// The self-contained form of `schema`, found at `at`. `request` removes
    /// read-only properties.
    pub(crate) fn inline(
        &mut self,
        schema: &'d Value,
        at: &Loc<'_>,
        request: bool,
    ) -> Result<Value, ImportError> {
        self.walk(schema, at, 0, request)
    }

    fn walk(
        &mut self,
        schema: &'d Value,
        at: &Loc<'_>,
        depth: usize,
        request: bool,
    ) -> Result<Value, ImportError> {
        self.nodes += 1;
        if self.nodes > self.budget {
            self.exceeded = true;
        }
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if depth > MAX_DEPTH {
            return Ok(stub(None, "(nested too deep; not expanded)".into()));
        }
        if let Some(Value::String(reference)) = map.get("$ref") {
            return self.reference(reference, map, at, depth, request);
        }
        let out = Value::Object(self.keywords(map, at, depth, request)?);
        Ok(if map.get("nullable") == Some(&Value::Bool(true)) {
            // A bare `{nullable: true}` already accepts null; a composition does not.
            let composed = ["allOf", "anyOf", "oneOf"]
                .iter()
                .any(|k| map.contains_key(*k));
            make_nullable(out, composed)
        } else {
            out
        })
    }

    /// All keywords of a schema object except `$ref` and `nullable`, with
    /// subschemas inlined.
    fn keywords(
        &mut self,
        map: &'d Map<String, Value>,
        at: &Loc<'_>,
        depth: usize,
        request: bool,
    ) -> Result<Map<String, Value>, ImportError> {
        let mut out = Map::new();
        for (key, value) in map {
            let here = at.key(key);
            let inlined = match (key.as_str(), value) {
                ("$ref" | "nullable" | "discriminator" | "xml" | "externalDocs", _) => continue,
                (
                    "properties" | "patternProperties" | "dependentSchemas" | "$defs"
                    | "definitions",
                    Value::Object(members),
                ) => {
                    let mut inlined = Map::new();
                    for (name, sub) in members {
                        let sub = self.walk(sub, &here.key(name), depth + 1, request)?;
                        inlined.insert(name.clone(), sub);
                    }
                    Value::Object(inlined)
                }
                (
                    "items"
                    | "additionalProperties"
                    | "additionalItems"
                    | "not"
                    | "contains"
                    | "propertyNames"
                    | "if"
                    | "then"
                    | "else"
                    | "unevaluatedItems"
                    | "unevaluatedProperties"
                    | "contentSchema",
                    Value::Object(_),
                ) => self.walk(value, &here, depth + 1, request)?,
                ("items" | "allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(items)) => {
                    let mut inlined = Vec::with_capacity(items.len());
                    for (i, sub) in items.iter().enumerate() {
                        inlined.push(self.walk(sub, &here.index(i), depth + 1, request)?);
                    }
                    Value::Array(inlined)
                }
                _ => value.clone(),
            };
            out.insert(key.clone(), inlined);
        }
        exclusive_bounds(&mut out);
        if request {
            drop_read_only(&mut out);
        }
        Ok(out)
    }

    fn reference(
        &mut self,
        reference: &'d str,
        map: &'d Map<String, Value>,
        at: &Loc<'_>,
        depth: usize,
        request: bool,
    ) -> Result<Value, ImportError> {
        let target = refs::resolve(self.doc, reference, at)?;
        let name = reference.rsplit('/').next().unwrap_or(reference);
        let open = self.stack.iter().filter(|r| **r == reference).count();
        let (expanded, is_stub) = if open >= RECURSION_DEPTH {
            let text = format!("(recursive reference to '{name}'; not expanded further)");
            (stub(Some(target), text), true)
        } else if self.exceeded || self.stack.len() >= self.max_nesting {
            let text = format!("('{name}' not expanded: schema too large)");
            (stub(Some(target), text), true)
        } else {
            self.stack.push(reference);
            self.deepest = self.deepest.max(self.stack.len());
            let expanded = self.walk(target, &Loc::of_pointer(reference), depth, request);
            self.stack.pop();
            (expanded?, false)
        };
        let mut siblings = self.keywords(map, at, depth, request)?;
        if is_stub {
            siblings.remove("description");
        }
        let merged = merge(expanded, siblings);
        Ok(if map.get("nullable") == Some(&Value::Bool(true)) {
            make_nullable(merged, true)
        } else {
            merged
        })
    }
}

fn stub(target: Option<&Value>, description: String) -> Value {
    let mut out = Map::new();
    if let Some(ty) = target.and_then(|t| t.get("type")) {
        out.insert("type".into(), ty.clone());
    }
    out.insert("description".into(), Value::String(description));
    Value::Object(out)
}

/// Combines an expanded `$ref` target with the keywords written next to the `$ref`.
fn merge(target: Value, siblings: Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return target;
    }
    let (annotations, constraints): (Map<String, Value>, Map<String, Value>) = siblings
        .into_iter()
        .partition(|(k, _)| ANNOTATIONS.contains(&k.as_str()));
    match target {
        Value::Object(mut t) if !constraints.keys().any(|k| t.contains_key(k)) => {
            t.extend(constraints);
            t.extend(annotations);
            Value::Object(t)
        }
        target => {
            let mut all_of = vec![target];
            if !constraints.is_empty() {
                all_of.push(Value::Object(constraints));
            }
            let mut outer = Map::new();
            outer.insert("allOf".into(), Value::Array(all_of));
            outer.extend(annotations);
            Value::Object(outer)
        }
    }
}

/// Lets `null` through: `null` is added to `type`, else offered as one more
/// `anyOf`/`oneOf` option; with `wrap`, any other schema without `type` becomes
/// `anyOf: [schema, {type: null}]`; without it, such a schema is left as it is.
fn make_nullable(schema: Value, wrap: bool) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let null = || Value::String("null".into());
    if let Some(ty) = map.get_mut("type") {
        match ty {
            Value::String(name) if name != "null" => {
                *ty = Value::Array(vec![Value::String(std::mem::take(name)), null()]);
            }
            Value::Array(types) if !types.contains(&null()) => types.push(null()),
            _ => {}
        }
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
        return Value::Object(map);
    }
    let null_option = serde_json::json!({"type": "null"});
    let mut offered = false;
    if !map.contains_key("allOf") {
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = map.get_mut(key) {
                if !options.contains(&null_option) {
                    options.push(null_option.clone());
                }
                offered = true;
            }
        }
    }
    if offered || !wrap {
        return Value::Object(map);
    }
    let mut outer = Map::new();
    outer.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(map), null_option]),
    );
    Value::Object(outer)
}

/// 3.0's `minimum: 5, exclusiveMinimum: true` is 2020-12's `exclusiveMinimum: 5`.
fn exclusive_bounds(map: &mut Map<String, Value>) {
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match map.get(flag) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = map.remove(bound) {
                    map.insert(flag.into(), limit);
                } else {
                    map.remove(flag);
                }
            }
            Some(Value::Bool(false)) => {
                map.remove(flag);
            }
            _ => {}
        }
    }
}

fn drop_read_only(map: &mut Map<String, Value>) {
    let Some(Value::Object(props)) = map.get_mut("properties") else {
        return;
    };
    let mut dropped = Vec::new();
    props.retain(|name, schema| {
        let read_only = schema.get("readOnly") == Some(&Value::Bool(true));
        if read_only {
            dropped.push(name.clone());
        }
        !read_only
    });
    if dropped.is_empty() {
        return;
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|r| !dropped.iter().any(|d| r == d.as_str()));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
#[path = "schema_tests.rs"]
mod tests;
