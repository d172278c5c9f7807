//! R2 and F applied to stored rows: `_filter` first (on the full rows, so a clause may name
//! a field that is not projected), then `_fields`. Rows are read only as far as the
//! clauses and paths need: their top-level keys named by a clause or a path.

use crate::engine::doc::Item;
use crate::engine::fields::{MatchLog, Projection};
use crate::engine::filter::Clause;
use crate::engine::guard::json_len;
use serde_json::Value;

/// A row ready to be shown: untouched text, or a projected value with its length.
#[derive(Debug, Clone)]
pub enum Row<'a> {
    Raw(&'a Item),
    Built(Value, usize),
}

impl Row<'_> {
    /// Compact JSON length (for raw text, its length as received: never less).
    pub fn len(&self) -> usize {
        match self {
            Row::Raw(i) => i.len(),
            Row::Built(_, l) => *l,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn to_value(&self) -> Value {
        match self {
            Row::Raw(i) => i.to_value(),
            Row::Built(v, _) => v.clone(),
        }
    }
}

/// Rows satisfying every clause, in order.
pub fn filtered<'a>(items: &'a [Item], filter: &[Clause]) -> Vec<&'a Item> {
    if filter.is_empty() {
        return items.iter().collect();
    }
    let mut heads: Vec<&str> = filter.iter().map(|c| c.field.head()).collect();
    heads.dedup();
    items
        .iter()
        .filter(|i| {
            let view = i.view(&heads);
            filter.iter().all(|c| c.matches(&view))
        })
        .collect()
}

/// Projects rows (when `fields` is set), recording F4 evidence in `log`.
pub fn projected<'a>(
    items: Vec<&'a Item>,
    fields: Option<&Projection>,
    log: Option<&mut MatchLog>,
) -> Vec<Row<'a>> {
    let Some(p) = fields else {
        return items.into_iter().map(Row::Raw).collect();
    };
    let heads = p.heads();
    let mut log = log;
    items
        .into_iter()
        .map(|i| {
            let view = i.view(&heads);
            if let Some(l) = log.as_deref_mut() {
                l.record(p, &view, || i.top_keys(), || i.to_value());
            }
            let v = p.apply(&view);
            let len = json_len(&v);
            Row::Built(v, len)
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
