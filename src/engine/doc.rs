//! The document model: how upstream bytes become a page of rows. With `item`, this is the
//! only code that knows the JSON library doing the heavy lifting (sonic-rs, lazily), so it
//! can change without touching behaviour. Rows are kept as their JSON text ([`Item`]):
//! most rows of a large response are counted, filtered on one or two keys, or stored, and
//! never need a tree.
//!
//! G2 lives here too: finding the item array without configuration.

use crate::engine::item::{validated_entries, value_of, Buf, Item};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Envelope keys that hold the rows, in order of preference (G2).
pub const ENVELOPE_KEYS: &[&str] = &[
    "data",
    "items",
    "results",
    "records",
    "value",
    "entries",
    "rows",
    "elements",
    "objects",
    "hits",
    "list",
    "nodes",
    "edges",
    "resources",
    "collection",
    "content",
];

/// Where the rows sit in a payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// The payload is the array.
    Root,
    /// Path of object keys to the array (one or two keys).
    Key(Vec<String>),
}

/// One parsed response: the rows, and everything else (`frame`, with the row array
/// replaced by `[]`), which is small and parsed fully.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub frame: Value,
    pub slot: Option<Slot>,
    pub items: Vec<Item>,
    /// False when the body was not JSON; `frame` is then its text.
    pub json: bool,
}

impl Page {
    /// Reads a response body. Never fails: a body that is not JSON is kept as text.
    pub fn parse(bytes: &[u8]) -> Self {
        Self::parse_owned(bytes.to_vec())
    }

    /// [`Page::parse`] taking the body, so its bytes become the rows' buffer uncopied.
    pub fn parse_owned(bytes: Vec<u8>) -> Self {
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => return Self::text(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        };
        if text.trim().is_empty() {
            return Self {
                frame: Value::Null,
                slot: None,
                items: Vec::new(),
                json: true,
            };
        }
        let buf: Buf = Arc::new(text);
        match parse_json(&buf, buf.trim()) {
            Some(page) => page,
            None => Self::text(buf.as_str().to_owned()),
        }
    }

    /// Reads a payload already in memory (stored results, cache hits).
    pub fn from_value(v: &Value) -> Self {
        Self::parse_owned(serde_json::to_vec(v).unwrap_or_default())
    }

    fn text(t: String) -> Self {
        Self {
            frame: Value::String(t),
            slot: None,
            items: Vec::new(),
            json: false,
        }
    }

    /// The payload with `items` put back in the slot.
    pub fn assemble(frame: &Value, slot: Option<&Slot>, items: Vec<Value>) -> Value {
        match slot {
            None => frame.clone(),
            Some(Slot::Root) => Value::Array(items),
            Some(Slot::Key(path)) => {
                let mut out = frame.clone();
                if let Some(target) = pointer_mut(&mut out, path) {
                    *target = Value::Array(items);
                }
                out
            }
        }
    }

    /// Like [`Page::assemble`], straight to JSON text without parsing the rows.
    pub fn assemble_json(frame: &Value, slot: Option<&Slot>, items: &[Item]) -> String {
        match slot {
            None => serde_json::to_string(frame).unwrap_or_default(),
            Some(s) => {
                let len = items.iter().map(|i| i.len() + 1).sum();
                crate::engine::rows::assemble_text(frame, s, items.iter().map(Item::raw), len)
            }
        }
    }
}

fn pointer_mut<'v>(v: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter()
        .try_fold(v, |cur, k| cur.as_object_mut()?.get_mut(k))
}

/// One top-level (or second-level) entry seen lazily.
struct Entry<'a> {
    key: String,
    raw: &'a str,
}

/// Entries of an object within the validated text.
fn entries(raw: &str) -> Vec<Entry<'_>> {
    validated_entries(raw)
        .map(|(key, raw)| Entry {
            key: key.into_owned(),
            raw,
        })
        .collect()
}

/// One validating pass over the whole text (sonic-rs's DOM parser is its fastest
/// validating pass; the tree is dropped at once), then the top level and the rows are
/// split without checking again.
fn parse_json(buf: &Buf, text: &str) -> Option<Page> {
    sonic_rs::from_str::<sonic_rs::Value>(text).ok()?;
    if text.starts_with('[') {
        return Some(Page {
            frame: Value::Array(Vec::new()),
            slot: Some(Slot::Root),
            items: Item::split_validated(buf, text),
            json: true,
        });
    }
    if !text.starts_with('{') {
        let v: Value = value_of(text);
        return Some(Page {
            frame: v,
            slot: None,
            items: Vec::new(),
            json: true,
        });
    }
    let top = entries(text);
    let path = choose_slot(&top, text.len());
    let Some(path) = path else {
        return Some(Page {
            frame: value_of(text),
            slot: None,
            items: Vec::new(),
            json: true,
        });
    };
    let mut items = Vec::new();
    let mut frame = Map::new();
    for e in &top {
        if e.key != path[0] {
            frame.insert(e.key.clone(), value_of(e.raw));
        } else if path.len() == 1 {
            items = Item::split_validated(buf, e.raw);
            frame.insert(e.key.clone(), Value::Array(Vec::new()));
        } else {
            let mut inner = Map::new();
            for c in entries(e.raw) {
                if c.key == path[1] {
                    items = Item::split_validated(buf, c.raw);
                    inner.insert(c.key, Value::Array(Vec::new()));
                } else {
                    inner.insert(c.key, value_of(c.raw));
                }
            }
            frame.insert(e.key.clone(), Value::Object(inner));
        }
    }
    Some(Page {
        frame: Value::Object(frame),
        slot: Some(Slot::Key(path)),
        items,
        json: true,
    })
}

/// G2: an envelope key at the top level, then one level down, else the largest array
/// within two levels — when it holds records (objects or arrays) or carries at least half
/// of the payload, so a single record with a short list of tags is not taken for rows.
fn choose_slot(top: &[Entry<'_>], total: usize) -> Option<Vec<String>> {
    let is_arr = |raw: &str| raw.starts_with('[');
    for name in ENVELOPE_KEYS {
        if top.iter().any(|e| e.key == *name && is_arr(e.raw)) {
            return Some(vec![(*name).to_owned()]);
        }
    }
    let nested: Vec<(&Entry<'_>, Vec<Entry<'_>>)> = top
        .iter()
        .filter(|e| e.raw.starts_with('{'))
        .map(|e| (e, entries(e.raw)))
        .collect();
    for name in ENVELOPE_KEYS {
        for (parent, children) in &nested {
            if children.iter().any(|c| c.key == *name && is_arr(c.raw)) {
                return Some(vec![parent.key.clone(), (*name).to_owned()]);
            }
        }
    }
    let mut best: Option<(usize, Vec<String>)> = None;
    let mut consider = |len: usize, path: Vec<String>| {
        if best.as_ref().is_none_or(|(l, _)| len > *l) {
            best = Some((len, path));
        }
    };
    for e in top.iter().filter(|e| is_arr(e.raw)) {
        consider(e.raw.len(), vec![e.key.clone()]);
    }
    for (parent, children) in &nested {
        for c in children.iter().filter(|c| is_arr(c.raw)) {
            consider(c.raw.len(), vec![parent.key.clone(), c.key.clone()]);
        }
    }
    best.filter(|(len, p)| *len * 2 >= total || holds_records(top, p))
        .map(|(_, p)| p)
}

/// Whether the array at `path` starts with an object or array (a list of records).
fn holds_records(top: &[Entry<'_>], path: &[String]) -> bool {
    let raw = top.iter().find(|e| e.key == path[0]).map(|e| e.raw);
    let raw = match (raw, path.get(1)) {
        (Some(r), None) => Some(r),
        (Some(r), Some(k)) => entries(r).into_iter().find(|c| c.key == *k).map(|c| c.raw),
        (None, _) => None,
    };
    raw.and_then(|r| r.get(1..))
        .is_some_and(|r| matches!(r.trim_start().as_bytes().first(), Some(b'{' | b'[')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slot(v: Value) -> Option<Slot> {
        Page::from_value(&v).slot
    }

    #[test]
    fn g2_top_level_array() {
        let p = Page::parse(br#" [ {"a":1}, {"a":2} ] "#);
        assert_eq!(p.slot, Some(Slot::Root));
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.items[1].raw(), r#"{"a":2}"#);
    }

    #[test]
    fn g2_envelope_keys_win_over_larger_arrays() {
        let v =
            json!({"meta": {"x": 1}, "warnings": ["w1", "w2", "w3", "w4"], "data": [{"id": 1}]});
        assert_eq!(slot(v), Some(Slot::Key(vec!["data".into()])));
        for k in ENVELOPE_KEYS {
            let v = json!({"other": 1, *k: [1, 2]});
            assert_eq!(slot(v), Some(Slot::Key(vec![(*k).into()])), "{k}");
        }
    }

    #[test]
    fn g2_two_levels_down() {
        let v = json!({"response": {"results": [{"id": 1}], "next": null}, "ok": true});
        let p = Page::from_value(&v);
        assert_eq!(
            p.slot,
            Some(Slot::Key(vec!["response".into(), "results".into()]))
        );
        assert_eq!(
            p.frame,
            json!({"response": {"results": [], "next": null}, "ok": true})
        );
        assert_eq!(p.items.len(), 1);
    }

    #[test]
    fn g2_largest_array_else_none() {
        let v = json!({"inboxes": [{"id": 1}, {"id": 2}], "tags": ["a"], "count": 2});
        assert_eq!(slot(v), Some(Slot::Key(vec!["inboxes".into()])));
        // A single record with a small list is not a list of rows.
        let v = json!({"id": 1, "name": "a long enough name to dominate", "tags": ["a"]});
        assert_eq!(slot(v), None);
        let v = json!({"id": 1, "numbers": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]});
        assert_eq!(slot(v), Some(Slot::Key(vec!["numbers".into()])));
        let v = json!({"id": 1, "name": "a long enough name to dominate", "tags": []});
        assert_eq!(slot(v), None);
        assert_eq!(slot(json!("text")), None);
    }

    #[test]
    fn invalid_json_anywhere_is_text_never_rows() {
        for bad in [
            r#"{"data":[{"a":1},{"b":]}"#,
            r#"{"data":[{"a":1},{"b":"\x"}]}"#,
            r#"[{"a":1},{"a":2}"#,
            r#"{"data":[1,2]} trailing"#,
            "{\"data\":[\"\u{1}\"]}",
        ] {
            let p = Page::parse(bad.as_bytes());
            assert!(!p.json && p.items.is_empty(), "{bad}");
            assert_eq!(p.frame, json!(bad));
        }
    }

    #[test]
    fn non_json_is_text() {
        let p = Page::parse(b"<html>nope</html>");
        assert!(!p.json);
        assert_eq!(p.frame, json!("<html>nope</html>"));
        assert!(Page::parse(b"").items.is_empty());
    }

    #[test]
    fn assemble_round_trips() {
        let v = json!({"a": {"items": [{"x": 1}, {"x": [2, 3]}]}, "b": "q"});
        let p = Page::from_value(&v);
        let json = Page::assemble_json(&p.frame, p.slot.as_ref(), &p.items);
        assert_eq!(serde_json::from_str::<Value>(&json).ok(), Some(v.clone()));
        let vals = p.items.iter().map(Item::to_value).collect();
        assert_eq!(Page::assemble(&p.frame, p.slot.as_ref(), vals), v);
    }
}
