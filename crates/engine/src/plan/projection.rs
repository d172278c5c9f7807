//! F1–F4: `_fields` projection. The output keeps the item's structure (`customer.name`
//! gives `{"customer": {"name": …}}`), maps over arrays on the way, and puts `null` where
//! a path reaches nothing. Paths that reached nothing on any item are reported with the
//! real keys, so the model can fix its call in one step.

use crate::document::path::Path;
use crate::document::raw_scan;
use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use serde_json::{json, Map, Value};

/// A parsed `_fields` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    paths: Vec<Path>,
    tree: Vec<Child>,
}

#[derive(Debug, Clone, PartialEq)]
struct Child {
    key: String,
    /// The key as a JSON string literal, written once for every row.
    quoted: String,
    node: Node,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// Keep the whole value.
    Leaf,
    Branch(Vec<Child>),
}

impl Projection {
    /// Accepts a list of dot-path strings (or one comma-separated string), at most
    /// `limits.max_fields` of them, counted before any is parsed.
    pub fn parse(arg: &Value, name: &str, limits: &Limits) -> Result<Self, EngineError> {
        let bad = || {
            EngineError::invalid(format!(
                "`{name}` must be a non-empty list of dot-paths, e.g. [\"id\", \"customer.name\", \"lines.sku\"]."
            ))
        };
        let count = match arg {
            Value::String(s) => s.bytes().filter(|b| *b == b',').count() + 1,
            Value::Array(a) => a.len(),
            _ => return Err(bad()),
        };
        if count > limits.max_fields {
            return Err(too_many(
                &format!("`{name}`"),
                count,
                limits.max_fields,
                "paths",
            ));
        }
        let raw: Vec<&str> = match arg {
            Value::String(s) => s.split(',').map(str::trim).collect(),
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().map(str::trim).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
            _ => return Err(bad()),
        };
        if raw.is_empty() {
            return Err(bad());
        }
        let mut paths: Vec<Path> = Vec::with_capacity(raw.len());
        let mut seen = std::collections::HashSet::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let p =
                Path::parse_bounded(r, &format!("`{name}[{i}]`"), limits)?.ok_or_else(|| {
                    EngineError::invalid(format!(
                        "`{name}` entry \"{r}\" is not a dot-path like \"customer.name\"."
                    ))
                })?;
            if seen.insert(p.clone()) {
                paths.push(p);
            }
        }
        let mut tree = Vec::new();
        for p in &paths {
            insert(&mut tree, p.segments());
        }
        Ok(Self { paths, tree })
    }

    pub fn paths(&self) -> &[Path] {
        &self.paths
    }

    /// Top-level keys an item must provide for the projection.
    pub fn heads(&self) -> Vec<&str> {
        self.tree.iter().map(|c| c.key.as_str()).collect()
    }

    /// [`Projection::apply`] on a row's raw text, written as JSON to `out` without
    /// building a tree. Leaf values are copied as they were received.
    pub fn write_raw(&self, row: &str, out: &mut String) {
        if raw_scan::is_object(row) || raw_scan::is_array(row) {
            write_branch(row, &self.tree, out, 0);
        } else {
            out.push_str(row.trim());
        }
    }

    /// F1/F4: the item cut down to the paths. Scalars are returned as they are: there is
    /// nothing to project and dropping them would lose the row.
    pub fn apply(&self, item: &Value) -> Value {
        match item {
            Value::Object(_) | Value::Array(_) => apply_branch(item, &self.tree),
            other => other.clone(),
        }
    }

    /// For each path, whether it reached anything (an explicit null counts) on `item`.
    pub fn reached<'a>(&'a self, item: &'a Value) -> impl Iterator<Item = bool> + 'a {
        self.paths.iter().map(move |p| !p.resolve(item).is_empty())
    }
}

fn insert(tree: &mut Vec<Child>, segs: &[String]) {
    let Some((first, rest)) = segs.split_first() else {
        return;
    };
    let pos = match tree.iter().position(|c| c.key == *first) {
        Some(i) => i,
        None => {
            let node = if rest.is_empty() {
                Node::Leaf
            } else {
                Node::Branch(Vec::new())
            };
            let quoted = serde_json::to_string(first).unwrap_or_else(|_| "\"\"".into());
            tree.push(Child {
                key: first.clone(),
                quoted,
                node,
            });
            tree.len() - 1
        }
    };
    match (&mut tree[pos].node, rest.is_empty()) {
        // A shorter path already keeps the whole value.
        (Node::Leaf, _) => {}
        (node @ Node::Branch(_), true) => *node = Node::Leaf,
        (Node::Branch(children), false) => insert(children, rest),
    }
}

fn apply_branch(v: &Value, children: &[Child]) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::with_capacity(children.len());
            for c in children {
                let got = match (m.get(&c.key), &c.node) {
                    (None, _) => Value::Null,
                    (Some(x), Node::Leaf) => x.clone(),
                    (Some(x), Node::Branch(b)) => apply_branch(x, b),
                };
                out.insert(c.key.clone(), got);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|e| apply_branch(e, children)).collect()),
        _ => Value::Null,
    }
}

fn write_branch(row: &str, children: &[Child], out: &mut String, depth: usize) {
    if depth >= raw_scan::MAX_DEPTH {
        out.push_str("null");
    } else if raw_scan::is_object(row) {
        // One pass over the row finds every wanted key (on the stack for the usual few).
        let mut small = [None; 8];
        let mut large;
        let found: &mut [Option<&str>] = if children.len() <= small.len() {
            &mut small[..children.len()]
        } else {
            large = vec![None; children.len()];
            &mut large
        };
        let mut missing = children.len();
        for (k, v) in raw_scan::entries(row) {
            let plain = !k.contains('\\');
            let hit = children.iter().position(|c| {
                if plain {
                    k == c.key
                } else {
                    raw_scan::key_is(k, &c.key)
                }
            });
            if let Some(i) = hit {
                if found[i].is_none() {
                    found[i] = Some(v);
                    missing -= 1;
                    if missing == 0 {
                        break;
                    }
                }
            }
        }
        out.push('{');
        for (n, (c, f)) in children.iter().zip(found.iter()).enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&c.quoted);
            out.push(':');
            match (*f, &c.node) {
                (None, _) => out.push_str("null"),
                (Some(v), Node::Leaf) => out.push_str(v),
                (Some(v), Node::Branch(b)) => write_branch(v, b, out, depth + 1),
            }
        }
        out.push('}');
    } else if raw_scan::is_array(row) {
        out.push('[');
        for (n, e) in raw_scan::elements(row).enumerate() {
            if n > 0 {
                out.push(',');
            }
            write_branch(e, children, out, depth + 1);
        }
        out.push(']');
    } else {
        out.push_str("null");
    }
}

/// Accumulates F4 evidence across the rows of one result.
#[derive(Debug, Default)]
pub struct MatchLog {
    reached: Vec<bool>,
    keys: Vec<String>,
    sample: Option<Value>,
}

/// How many distinct top-level keys `_unmatchedFields` lists at most.
const MAX_KEYS: usize = 100;

impl MatchLog {
    pub fn new(p: &Projection) -> Self {
        Self {
            reached: vec![false; p.paths.len()],
            ..Self::default()
        }
    }

    /// Records one row (as parsed, at least the projection's head keys) and its real keys.
    pub fn record(
        &mut self,
        p: &Projection,
        view: &Value,
        keys: impl FnOnce() -> Vec<String>,
        full: impl FnOnce() -> Value,
    ) {
        for (slot, hit) in self.reached.iter_mut().zip(p.reached(view)) {
            *slot |= hit;
        }
        if self.reached.iter().all(|r| *r) {
            return;
        }
        if self.keys.len() < MAX_KEYS {
            for k in keys() {
                if self.keys.len() < MAX_KEYS && !self.keys.contains(&k) {
                    self.keys.push(k);
                }
            }
        }
        if self.sample.is_none() {
            self.sample = Some(shallow(full()));
        }
    }

    /// Like [`MatchLog::record`], reading the row's raw text.
    pub fn record_raw(&mut self, p: &Projection, row: &str) {
        let mut reached = Vec::new();
        for (slot, path) in self.reached.iter_mut().zip(&p.paths) {
            if !*slot {
                reached.clear();
                raw_scan::resolve(row, path.segments(), &mut reached);
                *slot = !reached.is_empty();
            }
        }
        if self.reached.iter().all(|r| *r) {
            return;
        }
        if self.keys.len() < MAX_KEYS {
            for (k, _) in raw_scan::entries(row) {
                let k = raw_scan::key_string(k);
                if self.keys.len() < MAX_KEYS && !self.keys.contains(&k) {
                    self.keys.push(k);
                }
            }
        }
        if self.sample.is_none() {
            self.sample = Some(shallow(raw_scan::leaf(row)));
        }
    }

    /// F4: `{paths, topLevelKeys, sampleItem}` when some path matched no row at all.
    pub fn unmatched(&self, p: &Projection) -> Option<Value> {
        let paths: Vec<String> = p
            .paths
            .iter()
            .zip(&self.reached)
            .filter(|(_, r)| !**r)
            .map(|(p, _)| p.to_string())
            .collect();
        if paths.is_empty() || self.sample.is_none() {
            return None;
        }
        Some(json!({"paths": paths, "topLevelKeys": self.keys, "sampleItem": self.sample}))
    }
}

/// A sample row small enough to show: nested values beyond ~2,000 chars are summarised.
fn shallow(v: Value) -> Value {
    let size = serde_json::to_string(&v).map(|s| s.len()).unwrap_or(0);
    if size <= 2_000 {
        return v;
    }
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Array(a) => json!(format!("[array of {}]", a.len())),
                        Value::Object(o) => {
                            let keys: Vec<&String> = o.keys().take(20).collect();
                            json!(format!("{{object with keys {keys:?}}}"))
                        }
                        Value::String(s) if s.chars().count() > 200 => {
                            json!(format!("{}…", s.chars().take(200).collect::<String>()))
                        }
                        other => other,
                    };
                    (k, v)
                })
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proj(v: Value) -> Projection {
        Projection::parse(&v, "_fields", &Limits::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn f1_structure_is_preserved_and_arrays_mapped() {
        let p = proj(json!(["id", "customer.name", "lines.sku"]));
        let item = json!({"id": 7, "secret": 1, "customer": {"name": "Ann", "email": "a@x"},
                          "lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]});
        assert_eq!(
            p.apply(&item),
            json!({"id": 7, "customer": {"name": "Ann"}, "lines": [{"sku": "A"}, {"sku": "B"}]})
        );
        assert_eq!(p.heads(), ["id", "customer", "lines"]);
    }

    #[test]
    fn f4_missing_paths_give_null() {
        let p = proj(json!(["id", "customer.name"]));
        assert_eq!(
            p.apply(&json!({"x": 1})),
            json!({"id": null, "customer": null})
        );
        assert_eq!(
            p.apply(&json!({"customer": "plain"})),
            json!({"id": null, "customer": null})
        );
    }

    #[test]
    fn f1_shorter_path_keeps_whole_value() {
        let p = proj(json!(["customer.name", "customer"]));
        let item = json!({"customer": {"name": "Ann", "email": "e"}});
        assert_eq!(p.apply(&item), item);
    }

    #[test]
    fn f4_unmatched_reports_real_keys_and_a_sample() {
        let p = proj(json!(["id", "nmae"]));
        let mut log = MatchLog::new(&p);
        for item in [
            json!({"id": 1, "name": "a"}),
            json!({"id": 2, "name": "b", "extra": true}),
        ] {
            let keys = item
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            log.record(&p, &item, || keys, || item.clone());
        }
        let u = log.unmatched(&p).unwrap_or_default();
        assert_eq!(u["paths"], json!(["nmae"]));
        assert_eq!(u["topLevelKeys"], json!(["id", "name", "extra"]));
        assert_eq!(u["sampleItem"], json!({"id": 1, "name": "a"}));
        let ok = proj(json!(["id"]));
        let mut log = MatchLog::new(&ok);
        log.record(&ok, &json!({"id": null}), Vec::new, || json!({}));
        assert_eq!(log.unmatched(&ok), None, "an explicit null is a match");
    }

    #[test]
    fn fields_errors_are_specific() {
        assert!(Projection::parse(&json!([]), "_fields", &Limits::default()).is_err());
        assert!(Projection::parse(&json!([1]), "_fields", &Limits::default()).is_err());
        assert!(Projection::parse(&json!(["a..b"]), "_fields", &Limits::default()).is_err());
        assert_eq!(proj(json!("id, name")).paths().len(), 2);
    }

    #[test]
    fn f_forty_thousand_paths_are_refused_before_parsing() {
        let l = Limits::default();
        let many: Vec<String> = (0..40_000).map(|i| format!("f{i}")).collect();
        let comma = many.join(",");
        for arg in [json!(many), json!(comma)] {
            let e = Projection::parse(&arg, "_fields", &l).err();
            assert_eq!(
                e.as_ref().map(EngineError::code),
                Some("argument_limit_exceeded")
            );
            assert!(e.is_some_and(
                |e| e.detail().contains("40000 paths") && e.detail().contains("at most 100")
            ));
        }
        // at the bound, duplicates collapse (and the parse is linear)
        let at: Vec<String> = (0..l.max_fields).map(|i| format!("f{}", i % 7)).collect();
        assert_eq!(
            Projection::parse(&json!(at), "_fields", &l)
                .map(|p| p.paths().len())
                .ok(),
            Some(7)
        );
    }
}
