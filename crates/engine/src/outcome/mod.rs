//! P4: what a walk produced — every row, unprojected and unfiltered, with an honest
//! verdict — and its stored form (G3, C1: what `_resultId` and the dataset cache keep).

pub mod verdict;

use crate::document::assemble::around;
use crate::document::item::Item;
use crate::document::{Page, Slot};
use crate::learned::Learned;
use crate::plan::ForEachError;
use crate::resume::ResumePoint;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// An outcome's stored text ([`Outcome::store`]), shared with the rows that read from it.
pub type StoredJson = Arc<String>;

/// Why a walk ended (`_stoppedBy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The API had no more rows.
    End,
    Pages,
    Requests,
    Items,
    Bytes,
    Time,
    /// A cursor, URL or page came back a second time.
    Loop,
    /// The next-page URL left the provider's origin.
    OffOrigin,
    UpstreamError,
    /// E6: a fan-out by reference walked its per-call share of values; the rest are left
    /// for `_continue` (P10).
    Values,
    /// M3: the call was cancelled (an MCP `tasks/cancel`) while it walked; what was
    /// fetched before is kept, as at a bound.
    Cancelled,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::End => "end",
            Self::Pages => "pages",
            Self::Requests => "requests",
            Self::Items => "items",
            Self::Bytes => "bytes",
            Self::Time => "time",
            Self::Loop => "loop",
            Self::OffOrigin => "off_origin",
            Self::UpstreamError => "upstream_error",
            Self::Values => "values",
            Self::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        serde_json::from_value(Value::String(s.to_owned())).ok()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Every page of every collection was fetched.
    pub paging_complete: bool,
    pub likely_more_rows: bool,
    /// None for a single page fetched on purpose (no `_all_pages`).
    pub stopped_by: Option<StopReason>,
    pub note: String,
    /// The row count the API announced, when it did.
    pub total: Option<u64>,
    /// P11: which page number is the API's first page could not be established.
    pub first_page_unknown: bool,
    /// E6: for a fan-out by reference, its values done and left (`_forEachValues`).
    pub values: Option<ValueCount>,
}

/// E6: how far a fan-out by reference got, over every call that continued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueCount {
    /// Distinct values the reference gave.
    pub total: usize,
    /// Values walked to their end (or failed: see `_forEachErrors`).
    pub done: usize,
    /// Values a `_continue` would still fetch.
    pub left: usize,
}

impl Verdict {
    /// The envelope's head, in its one layout (stored and presented alike): `items` (the
    /// row slot, empty), `_itemCount`, `_pagingComplete`, `_likelyMoreRows`, `_total`,
    /// `_stoppedBy`, `_note`.
    pub(crate) fn envelope_head(&self, count: usize, note: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("items".into(), json!([]));
        m.insert("_itemCount".into(), json!(count));
        m.insert("_pagingComplete".into(), json!(self.paging_complete));
        m.insert("_likelyMoreRows".into(), json!(self.likely_more_rows));
        if let Some(t) = self.total {
            m.insert("_total".into(), json!(t));
        }
        if let Some(s) = self.stopped_by {
            m.insert("_stoppedBy".into(), json!(s.as_str()));
        }
        if let Some(c) = self.values {
            m.insert("_forEachValues".into(), json!(c));
        }
        m.insert("_note".into(), json!(note));
        m
    }
}

/// What a stored result remembers of the walk that made it (Q1), kept beside the stored
/// payload because a plain payload cannot carry its own verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// Every page of every collection came and no `_for_each` value failed.
    pub complete: bool,
    pub stopped_by: Option<StopReason>,
    /// The row count the API announced, when it did.
    pub total: Option<u64>,
    /// Rows stored.
    pub rows: usize,
    pub failed_values: usize,
    /// P10: the walk stopped at a bound and left a `_continue`.
    #[serde(default)]
    pub resumable: bool,
    /// P11: which page number is the API's first page could not be established.
    #[serde(default)]
    pub first_page_unknown: bool,
}

impl Provenance {
    /// Why a set is partial, as a clause (`None` when it is complete).
    pub fn gap(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let mut why = match self.stopped_by {
            None => "only one page was fetched".to_owned(),
            Some(StopReason::End) if self.failed_values > 0 => String::new(),
            Some(StopReason::End) if self.first_page_unknown => {
                "the API's first page could not be established".to_owned()
            }
            Some(StopReason::End) => "the API reported more rows than were fetched".to_owned(),
            Some(StopReason::UpstreamError) => "a page failed upstream".to_owned(),
            Some(StopReason::Loop) => "the API repeated a page".to_owned(),
            Some(StopReason::OffOrigin) => {
                "the next page pointed off the provider's site".to_owned()
            }
            Some(StopReason::Values) => {
                "only some of the `_for_each` values were fetched so far".to_owned()
            }
            Some(b) => format!("the walk stopped at its `{}` bound", b.as_str()),
        };
        if self.failed_values > 0 {
            if !why.is_empty() {
                why.push_str("; ");
            }
            why.push_str(&format!(
                "{} `_for_each` value(s) failed",
                self.failed_values
            ));
        }
        if let Some(t) = self.total.filter(|t| *t > self.rows as u64) {
            why.push_str(&format!(
                "; the API reported {t} rows and {} were fetched",
                self.rows
            ));
        }
        Some(why)
    }
}

/// The full result of one call, before `_filter`, `_fields` and the size guard.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The call used reserved arguments: presented as the envelope.
    pub envelope: bool,
    /// The first response without its rows (plain calls keep the tool's own shape).
    pub frame: Value,
    pub slot: Option<Slot>,
    /// False when the upstream answered with something other than JSON.
    pub json: bool,
    /// Merged rows (tagged with their `_for_each` value).
    pub items: Vec<Item>,
    pub verdict: Verdict,
    pub for_each_errors: Vec<ForEachError>,
    pub requests: u32,
    pub pages: u32,
    pub bytes: usize,
    /// P10: where a walk stopped by a bound would go on (None when nothing is left, or
    /// the walk cannot be resumed).
    pub resume: Option<ResumePoint>,
    /// P14: what the tool's walks know of its paging after this call (what it was given,
    /// confirmed, with what this call established and without what a response
    /// contradicted); the runtime keeps it when it differs from what it gave.
    pub learned: Learned,
}

impl Outcome {
    /// C1/C2: worth caching — every page came and no value failed.
    pub fn is_complete(&self) -> bool {
        self.verdict.paging_complete && self.for_each_errors.is_empty()
    }

    /// W2: the tool's own payload shape — the first response without its rows, and where
    /// the rows sit — which the stored envelope does not keep. The dataset cache keeps it
    /// beside the entry, so a hit is shaped like the walk that filled it.
    pub fn shape(&self) -> Value {
        let slot = match &self.slot {
            None => Value::Null,
            Some(Slot::Root) => json!("root"),
            Some(Slot::Key(path)) => json!(path),
        };
        json!({"frame": self.frame, "slot": slot, "json": self.json})
    }

    /// Puts back a [`Outcome::shape`] on an outcome read from its stored form; a shape
    /// that does not parse leaves the outcome as it was.
    pub fn restore_shape(&mut self, shape: &Value) {
        let slot = match shape.get("slot") {
            Some(Value::Null) => None,
            Some(Value::String(s)) if s == "root" => Some(Slot::Root),
            Some(Value::Array(a)) => {
                let path: Option<Vec<String>> =
                    a.iter().map(|k| k.as_str().map(str::to_owned)).collect();
                match path {
                    Some(p) if !p.is_empty() => Some(Slot::Key(p)),
                    _ => return,
                }
            }
            _ => return,
        };
        let Some(frame) = shape.get("frame") else {
            return;
        };
        self.frame = frame.clone();
        self.slot = slot;
        self.json = shape.get("json").and_then(Value::as_bool).unwrap_or(true);
    }

    /// Q1: what the stored result must remember of this walk.
    pub fn provenance(&self) -> Provenance {
        Provenance {
            complete: self.is_complete(),
            stopped_by: self.verdict.stopped_by,
            total: self.verdict.total,
            rows: self.items.len(),
            failed_values: self.for_each_errors.len(),
            resumable: self.resume.is_some(),
            first_page_unknown: self.verdict.first_page_unknown,
        }
    }

    /// The rows this outcome will show, whatever its shape.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The tool's own payload shape with every merged row in place (workflows, W2).
    pub fn payload(&self) -> Value {
        Page::assemble(
            &self.frame,
            self.slot.as_ref(),
            self.items.iter().map(Item::to_value).collect(),
        )
    }

    /// G3: what is stored under `_resultId` (and in the cache): for a plain call the
    /// tool's payload; for an envelope call `{items, _itemCount, _pagingComplete, …}`.
    /// Prefer [`Outcome::to_stored_json`], which never parses the rows.
    pub fn to_stored(&self) -> Value {
        serde_json::from_str(&self.to_stored_json()).unwrap_or(Value::Null)
    }

    /// [`Outcome::to_stored`] as compact JSON text, built without parsing rows. This is
    /// also the text `fetchToolResult` slices.
    pub fn to_stored_json(&self) -> String {
        if self.envelope {
            let (frame, slot) = self.stored_envelope();
            Page::assemble_json(&frame, Some(&slot), &self.items)
        } else {
            Page::assemble_json(&self.frame, self.slot.as_ref(), &self.items)
        }
    }

    /// [`Outcome::to_stored_json`] written once, with the rows moved into it: each row is
    /// copied in and let go, so a page's buffer is freed as soon as its last row is in the
    /// text and the walk's rows are never held twice (at most the text and one page). The
    /// rows read from the text afterwards; it is returned shared with them.
    pub fn store(&mut self) -> StoredJson {
        let (frame, slot) = match (self.envelope, &self.slot) {
            (true, _) => self.stored_envelope(),
            (false, Some(slot)) => (self.frame.clone(), slot.clone()),
            (false, None) => return Arc::new(self.to_stored_json()),
        };
        let Some((before, after)) = around(&frame, &slot) else {
            return Arc::new(self.to_stored_json());
        };
        let rows = std::mem::take(&mut self.items);
        let len = rows.iter().map(Item::len).sum::<usize>() + rows.len().saturating_sub(1);
        let mut text = String::with_capacity(before.len() + 1 + len + 1 + after.len());
        text.push_str(&before);
        text.push('[');
        let mut at = Vec::with_capacity(rows.len());
        for (n, row) in rows.into_iter().enumerate() {
            if n > 0 {
                text.push(',');
            }
            let start = text.len();
            text.push_str(row.raw());
            at.push(start..text.len());
        }
        text.push(']');
        text.push_str(&after);
        let text = Arc::new(text);
        self.items = at.into_iter().map(|r| Item::within(&text, r)).collect();
        text
    }

    fn stored_envelope(&self) -> (Value, Slot) {
        let v = &self.verdict;
        let mut m = v.envelope_head(self.items.len(), &v.note);
        if !self.for_each_errors.is_empty() {
            m.insert("_forEachErrors".into(), json!(self.for_each_errors));
        }
        m.insert("_requests".into(), json!(self.requests));
        (Value::Object(m), Slot::Key(vec!["items".into()]))
    }

    /// Reads back what [`Outcome::to_stored`] produced (cache hits).
    pub fn from_stored(v: Value) -> Self {
        Self::from_page(Page::from_value(&v))
    }

    /// Like [`Outcome::from_stored`], from the stored text.
    pub fn from_stored_json(s: &str) -> Self {
        Self::from_page(Page::parse(s.as_bytes()))
    }

    /// [`Outcome::from_stored_json`] taking the text, which becomes the rows' buffer
    /// uncopied (a stored result read back is held once).
    pub fn from_stored_text(text: String) -> Self {
        Self::from_page(Page::parse_owned(text.into_bytes()))
    }

    fn from_page(page: Page) -> Self {
        let envelope = page.slot == Some(Slot::Key(vec!["items".into()]))
            && page.frame.get("_pagingComplete").is_some();
        let f = &page.frame;
        let verdict = if envelope {
            Verdict {
                paging_complete: f["_pagingComplete"].as_bool().unwrap_or(false),
                likely_more_rows: f["_likelyMoreRows"].as_bool().unwrap_or(false),
                stopped_by: f["_stoppedBy"].as_str().and_then(StopReason::parse),
                note: f["_note"].as_str().unwrap_or_default().to_owned(),
                total: f["_total"].as_u64(),
                first_page_unknown: false,
                values: f
                    .get("_forEachValues")
                    .and_then(|c| serde_json::from_value(c.clone()).ok()),
            }
        } else {
            Verdict {
                paging_complete: true,
                likely_more_rows: false,
                stopped_by: Some(StopReason::End),
                note: String::new(),
                total: None,
                first_page_unknown: false,
                values: None,
            }
        };
        let for_each_errors = f
            .get("_forEachErrors")
            .and_then(|e| serde_json::from_value(e.clone()).ok())
            .unwrap_or_default();
        Self {
            envelope,
            frame: if envelope {
                json!({"items": []})
            } else {
                page.frame
            },
            slot: page.slot,
            json: page.json,
            items: page.items,
            verdict,
            for_each_errors,
            requests: 0,
            pages: 0,
            bytes: 0,
            resume: None,
            learned: Learned::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(envelope: bool) -> Outcome {
        let page = Page::from_value(&json!({"data": [{"id": 1}, {"id": 2}], "total": 2}));
        Outcome {
            envelope,
            frame: page.frame,
            slot: page.slot,
            json: true,
            items: page.items,
            verdict: Verdict {
                paging_complete: false,
                likely_more_rows: true,
                stopped_by: Some(StopReason::Pages),
                note: "n".into(),
                total: Some(9),
                first_page_unknown: false,
                values: None,
            },
            for_each_errors: vec![ForEachError {
                value: json!("x"),
                status: Some(404),
                error: "gone".into(),
            }],
            requests: 3,
            pages: 2,
            bytes: 10,
            resume: None,
            learned: Learned::default(),
        }
    }

    #[test]
    fn g3_envelope_round_trips_through_storage() {
        let o = outcome(true);
        let stored = o.to_stored();
        assert_eq!(stored["items"], json!([{"id": 1}, {"id": 2}]));
        assert_eq!(stored["_stoppedBy"], json!("pages"));
        let back = Outcome::from_stored(stored);
        assert_eq!(back.items, o.items);
        assert_eq!(back.verdict, o.verdict);
        assert_eq!(back.for_each_errors, o.for_each_errors);
        assert!(!back.is_complete());
    }

    #[test]
    fn g3_plain_payload_is_stored_as_is() {
        let o = outcome(false);
        assert_eq!(
            o.to_stored(),
            json!({"data": [{"id": 1}, {"id": 2}], "total": 2})
        );
        assert_eq!(o.payload(), o.to_stored());
        let back = Outcome::from_stored_json(&o.to_stored_json());
        assert_eq!(back.items.len(), 2);
        assert!(!back.envelope);
    }

    /// G3, C1: `store` writes exactly `to_stored_json`, and the rows then read from it.
    #[test]
    fn g3_store_moves_the_rows_into_the_stored_text() {
        for envelope in [true, false] {
            let mut o = outcome(envelope);
            let (text, rows) = (o.to_stored_json(), o.items.clone());
            let stored = o.store();
            assert_eq!(*stored, text);
            assert_eq!(o.items, rows);
            let base = stored.as_ptr() as usize..stored.as_ptr() as usize + stored.len();
            assert!(o
                .items
                .iter()
                .all(|i| base.contains(&(i.raw().as_ptr() as usize))));
            assert_eq!(o.to_stored_json(), text);
        }
        let mut empty = outcome(true);
        empty.items.clear();
        assert_eq!(*empty.store(), empty.to_stored_json());
    }

    /// `store` holds a walk's rows once — the text is written in one allocation
    /// of its length (no array built apart and spliced in), and each page's buffer is
    /// freed once its rows are in the text.
    #[test]
    fn g3_store_holds_the_rows_once() {
        let row = format!(r#"{{"id":1,"body":"{}"}}"#, "x".repeat(10_000));
        let page = vec![row.as_str(); 20].join(",");
        let mut o = outcome(true);
        o.items = (0..20)
            .flat_map(|_| Page::parse_owned(format!(r#"{{"data":[{page}]}}"#).into_bytes()).items)
            .collect();
        let rows: isize = o.items.iter().map(|i| i.len() as isize).sum();
        let mark = crate::testing::Mark::now();
        let stored = o.store();
        let used = mark.usage();
        assert_eq!(*stored, o.to_stored_json());
        // the text, plus a little (the frame's text, the rows' new places)
        assert!(
            used.peak <= rows + rows / 50,
            "peak {used:?} for {rows} bytes of rows"
        );
        // the pages went as the text took their rows
        assert!(
            used.kept <= rows / 50,
            "kept {used:?} for {rows} bytes of rows"
        );
    }

    #[test]
    fn w2_shape_survives_the_stored_envelope() {
        let o = outcome(true);
        let mut back = Outcome::from_stored_json(&o.to_stored_json());
        assert_eq!(back.slot, Some(Slot::Key(vec!["items".into()])));
        back.restore_shape(&o.shape());
        assert_eq!((&back.frame, &back.slot), (&o.frame, &o.slot));
        assert_eq!(
            back.payload(),
            json!({"data": [{"id": 1}, {"id": 2}], "total": 2})
        );
        assert_eq!(back.items, o.items);
        let mut untouched = back.clone();
        untouched.restore_shape(&json!({"slot": 3}));
        assert_eq!(untouched, back);
    }
}
