//! A payload written back as JSON text with its rows in their slot: the frame split
//! around the slot, and the rows written in between, never built apart and spliced in.
//! The one writer of a page's text (`Page::assemble_json`, stored results, presentation).

use crate::document::Slot;
use serde_json::Value;

/// `frame` as JSON text split around its row slot (which holds `[]` in `frame`): the
/// text before the rows' array and the text after it, so the array is written between
/// them in place — never built apart and spliced in (a second copy of every row).
/// `None` when the frame has no such slot (then the rows have no place in it).
pub(crate) fn around(frame: &Value, slot: &Slot) -> Option<(String, String)> {
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
    slot: &Slot,
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
