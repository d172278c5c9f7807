//! Dot-paths as `_fields`, `_filter` and `queryToolResult` use them: `customer.name`,
//! `lines.sku`. A path maps over arrays on its way (F1, R1), so one path can reach many
//! values in one item.

use crate::error::EngineError;
use crate::limits::{too_many, Limits};
use serde_json::Value;

/// A parsed dot-path; never empty, no empty segment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Path(Vec<String>);

impl Path {
    pub fn parse(s: &str) -> Option<Self> {
        let segs: Vec<String> = s.split('.').map(str::to_owned).collect();
        if segs.iter().any(String::is_empty) {
            return None;
        }
        Some(Self(segs))
    }

    /// `parse` within the path bounds of `limits`, the length checked before anything is
    /// split. `Ok(None)` for a malformed path (the caller words that error).
    pub fn parse_bounded(
        s: &str,
        what: &str,
        limits: &Limits,
    ) -> Result<Option<Self>, EngineError> {
        if s.len() > limits.max_path_bytes {
            return Err(too_many(what, s.len(), limits.max_path_bytes, "bytes"));
        }
        let segments = s.bytes().filter(|b| *b == b'.').count() + 1;
        if segments > limits.max_path_segments {
            return Err(too_many(
                what,
                segments,
                limits.max_path_segments,
                "segments",
            ));
        }
        Ok(Self::parse(s))
    }

    pub fn segments(&self) -> &[String] {
        &self.0
    }

    pub fn head(&self) -> &str {
        // parse() guarantees at least one segment.
        self.0.first().map(String::as_str).unwrap_or_default()
    }

    /// Every value the path reaches, mapping over arrays between segments. A missing key
    /// reaches nothing; an explicit `null` is reached (it exists).
    pub fn resolve<'v>(&self, item: &'v Value) -> Vec<&'v Value> {
        let mut out = Vec::new();
        walk(item, &self.0, &mut out);
        out
    }

    /// Like `resolve`, starting below the first segment (for items read lazily by key).
    pub fn resolve_tail<'v>(&self, head_value: &'v Value) -> Vec<&'v Value> {
        let mut out = Vec::new();
        walk(head_value, self.0.get(1..).unwrap_or_default(), &mut out);
        out
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

fn walk<'v>(v: &'v Value, segs: &[String], out: &mut Vec<&'v Value>) {
    let Some((first, rest)) = segs.split_first() else {
        out.push(v);
        return;
    };
    match v {
        Value::Object(m) => {
            if let Some(next) = m.get(first) {
                walk(next, rest, out);
            }
        }
        Value::Array(a) => {
            for e in a {
                walk(e, segs, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn f1_paths_map_over_arrays() {
        let item = json!({"lines": [{"sku": "a"}, {"sku": "b"}, {"x": 1}], "c": {"n": null}});
        let p = Path::parse("lines.sku").into_iter().next();
        let got: Vec<_> = p.iter().flat_map(|p| p.resolve(&item)).collect();
        assert_eq!(got, [&json!("a"), &json!("b")]);
        let n = Path::parse("c.n").map(|p| p.resolve(&item).len());
        assert_eq!(n, Some(1));
        assert_eq!(Path::parse("c.zz").map(|p| p.resolve(&item).len()), Some(0));
    }

    #[test]
    fn long_and_deep_paths_are_refused_by_name() {
        let l = Limits::default();
        let long = "a".repeat(l.max_path_bytes + 1);
        let deep = vec!["a"; l.max_path_segments + 1].join(".");
        for p in [long, deep] {
            let e = Path::parse_bounded(&p, "`_fields[0]`", &l).err();
            assert_eq!(
                e.as_ref().map(EngineError::code),
                Some("argument_limit_exceeded")
            );
            assert!(e.is_some_and(|e| e.detail().contains("`_fields[0]`")));
        }
        assert!(matches!(Path::parse_bounded("a.b", "x", &l), Ok(Some(_))));
        assert!(matches!(Path::parse_bounded("a..b", "x", &l), Ok(None)));
    }

    #[test]
    fn malformed_paths_are_rejected() {
        assert!(Path::parse("").is_none());
        assert!(Path::parse("a..b").is_none());
        assert!(Path::parse(".a").is_none());
    }
}
