//! R2 and F applied to stored rows: `_filter` first (on the full rows, so a clause may name
//! a field that is not projected), then `_fields`. Rows are read as raw text, only as far
//! as the clauses and paths need, and projected rows are written straight to JSON text.

use crate::document::item::Item;
use crate::document::raw_scan::value_of;
use crate::plan::projection::{MatchLog, Projection};
use crate::plan::row_filter::Clause;
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
