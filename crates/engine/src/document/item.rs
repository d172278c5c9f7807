//! One row as JSON text. A page's rows share the page's buffer (one allocation per page,
//! not per row) and are read lazily: filtering on a key reads that key's value only, and
//! a row nobody looks at is never parsed.

use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::document::raw_scan::{self, value_of};

/// The text a page's rows are slices of.
pub(crate) type Buf = Arc<String>;

/// A row: valid JSON text, a slice of a shared buffer.
///
/// Invariant: the text is valid JSON — validated by `Page::parse` or written by
/// serde_json. The raw scanner that reads it relies on that.
#[derive(Clone)]
pub struct Item {
    buf: Buf,
    range: Range<usize>,
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.raw())
    }
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        self.raw() == other.raw()
    }
}

impl Eq for Item {}

impl Item {
    fn owned(s: String) -> Self {
        let range = 0..s.len();
        Self {
            buf: Arc::new(s),
            range,
        }
    }

    /// A row whose text lies inside `buf` (as the parser hands it back), without copying.
    pub(crate) fn slice(buf: &Buf, raw: Cow<'_, str>) -> Self {
        let base = buf.as_ptr() as usize;
        let at = raw.as_ptr() as usize;
        match at.checked_sub(base) {
            Some(start) if start + raw.len() <= buf.len() && matches!(raw, Cow::Borrowed(_)) => {
                Self {
                    buf: Arc::clone(buf),
                    range: start..start + raw.len(),
                }
            }
            _ => Self::owned(raw.into_owned()),
        }
    }

    /// The row at `range` of `buf`, which the caller wrote there from a row's text (so
    /// it is valid JSON).
    pub(crate) fn within(buf: &Buf, range: Range<usize>) -> Self {
        Self {
            buf: Arc::clone(buf),
            range,
        }
    }

    #[cfg(test)]
    pub(crate) fn from_raw(raw: &str) -> Self {
        let v: Value = serde_json::from_str(raw).unwrap_or_else(|e| panic!("{e}: {raw}"));
        let _ = v;
        Self::owned(raw.to_owned())
    }

    pub fn from_value(v: &Value) -> Self {
        Self::owned(serde_json::to_string(v).unwrap_or_else(|_| "null".into()))
    }

    pub fn raw(&self) -> &str {
        self.buf.get(self.range.clone()).unwrap_or("null")
    }

    /// Length of the text in bytes (>= its length in chars).
    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    pub fn is_object(&self) -> bool {
        self.raw().starts_with('{')
    }

    pub fn to_value(&self) -> Value {
        value_of(self.raw())
    }

    /// The item reduced to the named top-level keys (objects), or the whole item parsed
    /// (anything else). Paths starting with those keys resolve on it as on the full item.
    pub fn view(&self, keys: &[&str]) -> Value {
        if !self.is_object() {
            return self.to_value();
        }
        let mut out = serde_json::Map::new();
        for (k, v) in validated_entries(self.raw()) {
            if keys.contains(&k.as_ref()) && !out.contains_key(k.as_ref()) {
                out.insert(k.into_owned(), value_of(v));
                if out.len() == keys.len() {
                    break;
                }
            }
        }
        Value::Object(out)
    }

    /// Top-level keys of an object item, in order.
    pub fn top_keys(&self) -> Vec<String> {
        if !self.is_object() {
            return Vec::new();
        }
        validated_entries(self.raw())
            .map(|(k, _)| k.into_owned())
            .collect()
    }

    pub fn has_key(&self, key: &str) -> bool {
        self.is_object() && validated_entries(self.raw()).any(|(k, _)| k == key)
    }

    /// E1: the item with `key: value` appended, unless it already has `key` (the API's
    /// own field wins) or is not an object.
    pub fn tagged(&self, key: &str, value: &Value) -> Self {
        if !self.is_object() || self.has_key(key) {
            return self.clone();
        }
        let body = self.raw().trim_end();
        let Some(open) = body.strip_suffix('}') else {
            return self.clone();
        };
        let sep = if open.trim_end() == "{" { "" } else { "," };
        let k = serde_json::to_string(key).unwrap_or_default();
        let v = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
        Self::owned(format!("{open}{sep}{k}:{v}}}"))
    }
}

/// Key/raw-value pairs of a JSON object known to be valid (an [`Item`]'s text).
pub(crate) fn validated_entries(raw: &str) -> impl Iterator<Item = (Cow<'_, str>, &str)> {
    raw_scan::entries(raw).map(|(k, v)| {
        let key = if k.contains('\\') {
            Cow::Owned(raw_scan::key_string(k))
        } else {
            Cow::Borrowed(k)
        };
        (key, v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn e1_tagging_never_overwrites() {
        let i = Item::from_raw(r#"{"a":1}"#);
        assert_eq!(i.tagged("k", &json!("v")).raw(), r#"{"a":1,"k":"v"}"#);
        assert_eq!(
            Item::from_raw("{}").tagged("k", &json!(2)).raw(),
            r#"{"k":2}"#
        );
        let own = Item::from_raw(r#"{"k":"api"}"#);
        assert_eq!(own.tagged("k", &json!("v")), own);
        assert_eq!(Item::from_raw("3").tagged("k", &json!(1)).raw(), "3");
    }

    #[test]
    fn view_keeps_only_named_keys() {
        let i = Item::from_raw(r#"{"a":{"b":1},"c":[1,2],"d":"x","e":"\u00e9"}"#);
        assert_eq!(i.view(&["a", "d"]), json!({"a": {"b": 1}, "d": "x"}));
        assert_eq!(i.view(&["e"]), json!({"e": "é"}));
        assert_eq!(i.top_keys(), ["a", "c", "d", "e"]);
    }

    #[test]
    fn scalars_parse_like_serde_json() {
        for raw in [
            "\"a b\"",
            "\"q\\\"\"",
            "null",
            "true",
            "false",
            "12",
            "-3",
            "1.5",
            "1e2",
            "18446744073709551615",
            "[1,{\"a\":null}]",
        ] {
            let want: Value = serde_json::from_str(raw).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(value_of(raw), want, "{raw}");
        }
    }

    #[test]
    fn rows_share_the_page_buffer() {
        let page = crate::document::Page::parse(b"[{\"a\":1}, {\"b\":2}]");
        let rows = &page.items;
        assert_eq!(
            rows.iter().map(Item::raw).collect::<Vec<_>>(),
            ["{\"a\":1}", "{\"b\":2}"]
        );
        assert!(Arc::ptr_eq(&rows[0].buf, &rows[1].buf));
    }
}
