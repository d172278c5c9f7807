//! C4: the label a dataset-cache hit carries. The cache itself belongs to the runtime;
//! the engine only says how a hit reads to the model.

use serde_json::{json, Value};

/// Adds `_cache: {hit: true, cachedAt, expiresAt}` to an envelope and tells the model that
/// fresher data is one `_refresh: true` away.
pub fn label_cache_hit(value: &mut Value, cached_at: &str, expires_at: &str) {
    let Value::Object(m) = value else { return };
    m.insert(
        "_cache".into(),
        json!({"hit": true, "cachedAt": cached_at, "expiresAt": expires_at}),
    );
    let extra = format!(
        "Served from a cached walk made at {cached_at}; if the user needs the very latest data, call again with `_refresh: true`."
    );
    let note = match m.get("_note").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => format!("{n} {extra}"),
        _ => extra,
    };
    m.insert("_note".into(), Value::String(note));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c4_label() {
        let mut v = json!({"items": [], "_note": "Every page was fetched."});
        let before = crate::engine::guard::json_len(&v);
        label_cache_hit(&mut v, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z");
        assert_eq!(
            v["_cache"],
            json!({"hit": true, "cachedAt": "2026-01-01T00:00:00Z", "expiresAt": "2026-01-02T00:00:00Z"})
        );
        let mut long = json!({"items": [], "_note": "x"});
        let t = "2026-01-01T00:00:00.123456789+00:00";
        let b = crate::engine::guard::json_len(&long);
        label_cache_hit(&mut long, t, t);
        // The guard leaves room for the label, so a labelled hit still fits the budget.
        assert!(
            crate::engine::guard::json_len(&long) - b <= crate::engine::guard::RUNTIME_HEADROOM
        );
        assert!(crate::engine::guard::json_len(&v) > before);
        let note = v["_note"].as_str().unwrap_or_default();
        assert!(note.starts_with("Every page was fetched.") && note.contains("_refresh: true"));
    }
}
