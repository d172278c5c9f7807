//! R2 and F applied to stored rows: `_filter` first (on the full rows, so a clause may name
//! a field that is not projected), then `_fields`. Rows are read as raw text, only as far
//! as the clauses and paths need, and projected rows are written straight to JSON text.

use crate::document::item::Item;
use crate::document::raw_scan::value_of;
use crate::present::projection::{MatchLog, Projection};
use crate::present::row_filter::Clause;
use serde_json::Value;

/// A row ready to be shown: untouched text, or projected text.
#[derive(Debug, Clone)]
pub enum Row<'a> {
    Raw(&'a Item),
    Built(String),
}

impl Row<'_> {
    /// The row's JSON text, exactly as it will be written.
    pub fn text(&self) -> &str {
        match self {
            Row::Raw(i) => i.raw(),
            Row::Built(s) => s,
        }
    }

    pub fn len(&self) -> usize {
        self.text().len()
    }

    pub fn is_empty(&self) -> bool {
        self.text().is_empty()
    }

    pub fn to_value(&self) -> Value {
        value_of(self.text())
    }
}

/// Rows satisfying every clause, in order.
pub fn filtered<'a>(items: &'a [Item], filter: &[Clause]) -> Vec<&'a Item> {
    items
        .iter()
        .filter(|i| filter.iter().all(|c| c.matches_raw(i.raw())))
        .collect()
}

/// Projects rows (when `fields` is set), recording F4 evidence in `log`.
pub fn projected<'a>(
    items: Vec<&'a Item>,
    fields: Option<&Projection>,
    mut log: Option<&mut MatchLog>,
) -> Vec<Row<'a>> {
    let Some(p) = fields else {
        return items.into_iter().map(Row::Raw).collect();
    };
    // Sized from the previous row, so a row is written with one allocation.
    let mut guess = 64;
    items
        .into_iter()
        .map(|i| {
            if let Some(l) = log.as_deref_mut() {
                l.record_raw(p, i.raw());
            }
            let mut s = String::with_capacity(guess);
            p.write_raw(i.raw(), &mut s);
            guess = s.len() + 32;
            Row::Built(s)
        })
        .collect()
}

/// R2: filter, then project. Returns the rows and `_unmatchedFields` when a path matched
/// nothing on any row.
pub fn shape<'a>(
    items: &'a [Item],
    filter: &[Clause],
    fields: Option<&Projection>,
) -> (Vec<Row<'a>>, Option<Value>) {
    let kept = filtered(items, filter);
    match fields {
        None => (projected(kept, None, None), None),
        Some(p) => {
            let mut log = MatchLog::new(p);
            let rows = projected(kept, Some(p), Some(&mut log));
            (rows, log.unmatched(p))
        }
    }
}

/// `frame` as JSON text split around its row slot (which holds `[]` in `frame`): the
/// text before the rows' array and the text after it, so the array is written between
/// them in place — never built apart and spliced in (a second copy of every row).
/// `None` when the frame has no such slot (then the rows have no place in it).
pub(crate) fn around(frame: &Value, slot: &crate::document::Slot) -> Option<(String, String)> {
    use crate::document::Slot;
    let Slot::Key(path) = slot else {
        return Some((String::new(), String::new()));
    };
    // A marker no real payload contains stands for the rows.
    const MARK: &str = "\u{1}loopgate:rows\u{1}";
    let mut f = frame.clone();
    let target = path
        .iter()
        .try_fold(&mut f, |cur, k| cur.as_object_mut()?.get_mut(k));
    if let Some(t) = target {
        *t = Value::String(MARK.into());
    }
    let mut text = serde_json::to_string(&f).unwrap_or_default();
    let quoted = serde_json::to_string(MARK).unwrap_or_default();
    let at = text.find(&quoted)?;
    let after = text[at + quoted.len()..].to_owned();
    text.truncate(at);
    Some((text, after))
}

/// Writes `frame` as JSON with `rows` as the array at `slot` (which holds `[]` in `frame`),
/// in one allocation of its exact length (`rows_len`: the rows' bytes, no separators).
pub fn assemble_text<'r>(
    frame: &Value,
    slot: &crate::document::Slot,
    rows: impl Iterator<Item = &'r str>,
    rows_len: usize,
) -> String {
    let Some((before, after)) = around(frame, slot) else {
        return serde_json::to_string(frame).unwrap_or_default();
    };
    let mut rows = rows.peekable();
    let commas = rows.size_hint().0.saturating_sub(1);
    let mut out = String::with_capacity(before.len() + rows_len + commas + 2 + after.len());
    out.push_str(&before);
    out.push('[');
    if let Some(first) = rows.next() {
        out.push_str(first);
        for r in rows {
            out.push(',');
            out.push_str(r);
        }
    }
    out.push(']');
    out.push_str(&after);
    out
}
