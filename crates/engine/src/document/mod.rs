//! The document model: how upstream bytes become a page of rows. With `item` and `raw`,
//! this is the only code that knows how JSON is read (one serde_json validating pass that
//! keeps rows as borrowed text), so that can change without touching behaviour. Rows are
//! kept as their JSON text ([`Item`]): most rows of a large response are counted, filtered
//! on one or two keys, or stored, and never need a tree.
//!
//! G2 (finding the item array without configuration) is [`crate::document::item_array`], on what
//! this pass keeps.

pub mod assemble;
pub mod item;
pub(crate) mod item_array;
pub mod path;
pub mod raw_scan;

use crate::document::item::{Buf, Item};
use crate::document::item_array::choose_slot;
use crate::document::raw_scan::value_of;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

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
    pub fn parse_owned(mut bytes: Vec<u8>) -> Self {
        // the rows keep this buffer for the walk's life: no spare capacity with it (a
        // body read in growing chunks holds up to twice its length; shrinking is in place)
        bytes.shrink_to_fit();
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

    /// G7: reads this page the way an earlier page of the same collection was read: when
    /// the payload has an array at `slot`, those are its rows (an empty one is zero rows),
    /// whatever array the page would have been taken for on its own. False when it has
    /// none there — the page is not the collection `slot` came from.
    pub fn conform(&mut self, slot: &Slot) -> bool {
        if self.slot.as_ref() == Some(slot) {
            return true;
        }
        let Slot::Key(path) = slot else {
            return false;
        };
        if !self.json || self.slot == Some(Slot::Root) {
            return false;
        }
        let rows = match pointer_mut(&mut self.frame, path) {
            Some(Value::Array(a)) => std::mem::take(a),
            _ => return false,
        };
        if let Some(Slot::Key(old)) = self.slot.take() {
            let back: Vec<Value> = std::mem::take(&mut self.items)
                .iter()
                .map(Item::to_value)
                .collect();
            if let Some(t) = pointer_mut(&mut self.frame, &old) {
                *t = Value::Array(back);
            }
        }
        self.items = rows.iter().map(Item::from_value).collect();
        self.slot = Some(slot.clone());
        true
    }

    /// G7: reads this page at the item array its response schema documents (`path`). An
    /// array there is the rows; a body that leaves it out or sends `null` (protobuf-style
    /// JSON omits empty lists) has zero rows there — the empty array is written into the
    /// frame, so the page reads back the same from a stored result. False (the page is
    /// left as it was) when the body is no JSON object, or holds its rows elsewhere.
    pub fn documented(&mut self, path: &[String]) -> bool {
        let slot = Slot::Key(path.to_vec());
        if self.slot.is_some() || !self.json || !self.frame.is_object() || path.is_empty() {
            return self.slot.as_ref() == Some(&slot);
        }
        if self.conform(&slot) {
            return true;
        }
        let mut at = &mut self.frame;
        for (i, k) in path.iter().enumerate() {
            let Value::Object(m) = at else {
                return false;
            };
            let last = i + 1 == path.len();
            let v = m.entry(k.clone()).or_insert(if last {
                Value::Null
            } else {
                Value::Object(Map::new())
            });
            if last {
                if !v.is_null() {
                    return false;
                }
                *v = Value::Array(Vec::new());
            }
            at = v;
        }
        self.items.clear();
        self.slot = Some(slot);
        true
    }

    /// G7: a body with no item array that is a list's envelope with the list left out
    /// ([`item_array::bare_envelope`]): zero rows, never one row holding the envelope.
    /// `first`: the frame and slot of the call's first page that held rows in an envelope;
    /// the page is then read at that slot (an empty array written there).
    pub fn bare(&mut self, first: Option<(&Value, &Slot)>) -> bool {
        if self.slot.is_some() || !self.json {
            return false;
        }
        if !item_array::bare_envelope(&self.frame, first.map(|(f, _)| f)) {
            return false;
        }
        if let Some((_, Slot::Key(path))) = first {
            self.documented(path);
        }
        true
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
                let len = items.iter().map(Item::len).sum();
                crate::document::assemble::assemble_text(frame, s, items.iter().map(Item::raw), len)
            }
        }
    }
}

fn pointer_mut<'v>(v: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter()
        .try_fold(v, |cur, k| cur.as_object_mut()?.get_mut(k))
}

/// What the single validating pass keeps of a value within two levels of the top: arrays
/// split into their elements' text (candidate rows), objects at the top level opened one
/// more level, everything else parsed (it belongs to the frame).
pub(super) enum Cap<'a> {
    Arr(Vec<&'a RawValue>),
    Obj(Vec<(String, Cap<'a>)>),
    Val(Value),
}

impl Cap<'_> {
    /// Bytes of an array's elements (with separators): its size for "largest array".
    pub(super) fn array_bytes(&self) -> Option<usize> {
        match self {
            Cap::Arr(a) => Some(a.iter().map(|r| r.get().len() + 1).sum::<usize>() + 1),
            _ => None,
        }
    }

    fn into_value(self) -> Value {
        match self {
            Cap::Arr(a) => Value::Array(a.iter().map(|r| value_of(r.get())).collect()),
            Cap::Obj(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, c)| (k, c.into_value()))
                    .collect(),
            ),
            Cap::Val(v) => v,
        }
    }
}

/// Reads one value at `depth` (0 = the payload) into a [`Cap`].
struct Capture(u8);

impl<'de> DeserializeSeed<'de> for Capture {
    type Value = Cap<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cap<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Capture {
    type Value = Cap<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cap<'de>, A::Error> {
        if self.0 > 2 {
            return Value::deserialize(SeqAccessDeserializer::new(seq)).map(Cap::Val);
        }
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(16));
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            out.push(raw);
        }
        Ok(Cap::Arr(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cap<'de>, A::Error> {
        if self.0 > 1 {
            return Value::deserialize(MapAccessDeserializer::new(map)).map(Cap::Val);
        }
        // a key given twice keeps its last value, as a parsed `Value` would, so the item
        // array is chosen from what the page holds (fuzzing found one chosen from a
        // shadowed duplicate, then read back as another array)
        let mut out: Vec<(String, Cap<'de>)> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(Capture(self.0 + 1))?;
            match seen.get(&k) {
                Some(&i) => out[i].1 = v,
                None => {
                    seen.insert(k.clone(), out.len());
                    out.push((k, v));
                }
            }
        }
        Ok(Cap::Obj(out))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::from(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::String(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::String(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::Null))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Cap<'de>, E> {
        Ok(Cap::Val(Value::Null))
    }
}

/// The one pass over a response: serde_json validates every byte (its recursion limit
/// refuses hostile nesting instead of overflowing the stack) and, on the way, splits
/// every array within two levels into its elements' text, so the rows are never scanned
/// a second time.
fn parse_json(buf: &Buf, text: &str) -> Option<Page> {
    let mut de = serde_json::Deserializer::from_str(text);
    let cap = Capture(0).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let rows = |a: Vec<&RawValue>| -> Vec<Item> {
        a.into_iter()
            .map(|r| Item::slice(buf, Cow::Borrowed(r.get())))
            .collect()
    };
    let top = match cap {
        Cap::Arr(a) => {
            return Some(Page {
                frame: Value::Array(Vec::new()),
                slot: Some(Slot::Root),
                items: rows(a),
                json: true,
            })
        }
        Cap::Val(v) => {
            return Some(Page {
                frame: v,
                slot: None,
                items: Vec::new(),
                json: true,
            })
        }
        Cap::Obj(top) => top,
    };
    let Some(path) = choose_slot(&top, text.len()) else {
        return Some(Page {
            frame: Cap::Obj(top).into_value(),
            slot: None,
            items: Vec::new(),
            json: true,
        });
    };
    let mut items = Vec::new();
    let mut frame = Map::new();
    for (key, cap) in top {
        let value = match cap {
            Cap::Arr(a) if key == path[0] && path.len() == 1 => {
                items = rows(a);
                Value::Array(Vec::new())
            }
            Cap::Obj(children) if key == path[0] => Value::Object(
                children
                    .into_iter()
                    .map(|(k, c)| match c {
                        Cap::Arr(a) if path.get(1) == Some(&k) => {
                            items = rows(a);
                            (k, Value::Array(Vec::new()))
                        }
                        other => (k, other.into_value()),
                    })
                    .collect(),
            ),
            other => other.into_value(),
        };
        frame.insert(key, value);
    }
    Some(Page {
        frame: Value::Object(frame),
        slot: Some(Slot::Key(path)),
        items,
        json: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::item_array::ENVELOPE_KEYS;
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
    fn g7_an_empty_item_array_is_zero_rows_not_a_record() {
        for v in [
            json!({"bookings": []}),
            json!({"bookings": [], "total": 0, "next": null}),
            json!({"result": {"bookings": []}, "ok": true}),
            json!({"data": []}),
            json!([]),
        ] {
            let p = Page::from_value(&v);
            assert!(p.slot.is_some() && p.items.is_empty(), "{v}");
        }
        // A record with an empty list, or with several empty lists, is one record.
        assert_eq!(slot(json!({"id": 7, "tags": []})), None);
        assert_eq!(slot(json!({"_id": "x", "bookings": []})), None);
        assert_eq!(slot(json!({"a": [], "b": []})), None);
        assert_eq!(slot(json!({"name": "x"})), None);
    }

    #[test]
    fn g7_conform_reads_a_page_at_an_earlier_pages_slot() {
        let want = Slot::Key(vec!["bookings".into()]);
        let mut p = Page::from_value(&json!({"id": 3, "bookings": []}));
        assert!(p.conform(&want) && p.items.is_empty());
        assert_eq!(p.frame, json!({"id": 3, "bookings": []}));
        let mut p =
            Page::from_value(&json!({"bookings": [{"id": 1}], "big": [{"x": 1}, {"x": 2}]}));
        assert!(p.conform(&want));
        assert_eq!(p.items.len(), 1);
        let mut p =
            Page::from_value(&json!({"big": [{"x": 1}, {"x": 2}], "bookings": [{"id": 1}]}));
        assert!(p.conform(&Slot::Key(vec!["big".into()])));
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.frame["bookings"], json!([{"id": 1}]));
        assert!(!Page::from_value(&json!({"error": "x"})).conform(&want));
        assert!(!Page::parse(b"<html>").conform(&want));
        assert!(!Page::from_value(&json!([{"id": 1}])).conform(&want));
    }

    #[test]
    fn g7_a_documented_list_left_out_is_zero_rows_there() {
        let path = vec!["result".to_owned(), "messages".to_owned()];
        let mut p = Page::from_value(&json!({"resultSizeEstimate": 0}));
        assert!(p.documented(&path) && p.items.is_empty());
        assert_eq!(
            p.frame,
            json!({"resultSizeEstimate": 0, "result": {"messages": []}})
        );
        let mut p = Page::from_value(&json!({"result": {"messages": null}}));
        assert!(p.documented(&path));
        let mut p = Page::from_value(&json!({"result": {"messages": [{"id": 1}]}}));
        assert!(p.documented(&path) && p.items.len() == 1);
        // rows elsewhere, a text body, a value where the list should be: left as they are
        assert!(!Page::from_value(&json!({"data": [{"id": 1}]})).documented(&path));
        assert!(!Page::parse(b"<html>").documented(&path));
        assert!(!Page::from_value(&json!({"result": {"messages": 3}})).documented(&path));
    }

    #[test]
    fn g7_an_envelope_without_its_list_is_no_record() {
        let bare = |v: Value| Page::from_value(&v).bare(None);
        assert!(bare(json!({})));
        assert!(bare(json!({"resultSizeEstimate": 0})));
        assert!(bare(
            json!({"totalSize": 0, "done": true, "nextPageToken": ""})
        ));
        assert!(bare(
            json!({"filtered_table_rows_count": 0, "row_count": 0})
        ));
        // records: an id, or fields that are no paging metadata
        assert!(!bare(json!({"id": 7, "total": 3})));
        assert!(!bare(json!({"account": "acme", "discount": 10})));
        assert!(!bare(json!({"name": "x"})));
        // with the call's first envelope: only its keys
        let first = json!({"experiments": [], "region": "eu"});
        let slot = Slot::Key(vec!["experiments".into()]);
        let mut p = Page::from_value(&json!({"region": "eu"}));
        assert!(p.bare(Some((&first, &slot))));
        assert_eq!(p.slot, Some(slot.clone()));
        assert!(!Page::from_value(&json!({"error": "x"})).bare(Some((&first, &slot))));
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
    fn deeply_nested_payloads_do_not_overflow_the_stack() {
        let deep = format!(
            "{{\"data\":[{}1{}],\"x\":{}2{}}}",
            "[".repeat(200_000),
            "]".repeat(200_000),
            "[".repeat(200_000),
            "]".repeat(200_000)
        );
        let p = Page::parse(deep.as_bytes());
        // Whatever the reading, it returns: rows (unparsed) or text.
        assert!(p.items.len() <= 1);
        let rows: Vec<Value> = p.items.iter().map(Item::to_value).collect();
        assert!(rows.len() <= 1);
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

    /// G2, found by fuzzing (fuzz/regressions/item_array): a key given twice keeps its
    /// last value, and the item array is chosen among what the page holds — so a page
    /// rebuilt and read again (a stored result, a cache hit) has the very same rows.
    #[test]
    fn a_duplicate_key_keeps_its_last_value_and_the_rows_survive_a_round_trip() {
        let body = br#"{"b": [{"x":1},{"x":2},{"x":3}], "c": [{"y":1},{"y":2}], "b": [{"x":9}]}"#;
        let p = Page::parse(body);
        assert_eq!(p.slot, Some(Slot::Key(vec!["c".into()])));
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.frame["b"], json!([{"x": 9}]));
        let rebuilt = Page::assemble_json(&p.frame, p.slot.as_ref(), &p.items);
        let again = Page::parse(rebuilt.as_bytes());
        assert_eq!((again.slot, again.items), (p.slot, p.items));
    }

    /// G2, found by fuzzing: an array of records wins over an array of scalars, whose
    /// bytes change when its numbers are written again (`4.444e44` → `4.444e+44`).
    #[test]
    fn records_win_over_scalars_so_a_stored_page_reads_back_the_same_rows() {
        let p = Page::parse(br#"{"a":[	4.444e44],"Ab":[{"xxj":6}],":a":[	],":2ve":[]}"#);
        assert_eq!(p.slot, Some(Slot::Key(vec!["Ab".into()])));
        let rebuilt = Page::assemble_json(&p.frame, p.slot.as_ref(), &p.items);
        let again = Page::parse(rebuilt.as_bytes());
        assert_eq!((again.slot, again.items.len()), (p.slot, 1));
    }
}
