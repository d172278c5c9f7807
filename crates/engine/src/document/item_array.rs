//! G2, G7: which array of a JSON object holds the rows, found without configuration — on
//! what the document model's one pass kept of the payload's top two levels ([`Cap`]).

use crate::document::Cap;

/// Envelope keys that hold the rows, in order of preference (G2).
pub(super) const ENVELOPE_KEYS: &[&str] = &[
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

/// G2: an envelope key at the top level, then one level down, else the largest array
/// within two levels — when it holds records (objects or arrays) or carries at least half
/// of the payload, so a single record with a short list of tags is not taken for rows.
pub(super) fn choose_slot(top: &[(String, Cap<'_>)], total: usize) -> Option<Vec<String>> {
    let is_arr = |c: &Cap<'_>| matches!(c, Cap::Arr(_));
    for name in ENVELOPE_KEYS {
        if top.iter().any(|(k, c)| k == name && is_arr(c)) {
            return Some(vec![(*name).to_owned()]);
        }
    }
    let nested: Vec<(&String, &Vec<(String, Cap<'_>)>)> = top
        .iter()
        .filter_map(|(k, c)| match c {
            Cap::Obj(children) => Some((k, children)),
            _ => None,
        })
        .collect();
    for name in ENVELOPE_KEYS {
        for (parent, children) in &nested {
            if children.iter().any(|(k, c)| k == name && is_arr(c)) {
                return Some(vec![(*parent).clone(), (*name).to_owned()]);
            }
        }
    }
    // records (objects or arrays) before scalars, then the most bytes: an array of
    // scalars must not win on bytes its numbers only have as written (`4.4e44` is
    // re-written `4.4e+44`), or a stored page read back would find another array
    // (fuzzing found it, fuzz/regressions/item_array)
    let mut best: Option<((bool, usize), Vec<String>, &Cap<'_>)> = None;
    let candidates = top
        .iter()
        .map(|(k, c)| (vec![k.clone()], c))
        .chain(nested.iter().flat_map(|(p, children)| {
            children
                .iter()
                .map(|(k, c)| (vec![(*p).clone(), k.clone()], c))
        }));
    for (path, c) in candidates {
        if let Some(len) = c.array_bytes() {
            let rank = (holds_records(c), len);
            if best.as_ref().is_none_or(|(r, _, _)| rank > *r) {
                best = Some((rank, path, c));
            }
        }
    }
    best.filter(|((records, len), _, _)| *len * 2 >= total || *records)
        .map(|(_, p, _)| p)
        .or_else(|| empty_collection(top, &nested))
}

/// G7: an empty array is the (empty) item array when it is the only array there is and
/// the object around it is not a record (no `id`-like key): `{"bookings": [], "total": 0}`
/// is zero rows, while `{"id": 7, "tags": []}` stays one record.
fn empty_collection(
    top: &[(String, Cap<'_>)],
    nested: &[(&String, &Vec<(String, Cap<'_>)>)],
) -> Option<Vec<String>> {
    let is_identity = |k: &str| {
        matches!(
            k.trim_start_matches('_').to_ascii_lowercase().as_str(),
            "id" | "uuid" | "guid"
        )
    };
    if top.iter().any(|(k, _)| is_identity(k)) {
        return None;
    }
    let empty = |c: &Cap<'_>| matches!(c, Cap::Arr(a) if a.is_empty());
    let arrays: Vec<Vec<String>> = top
        .iter()
        .filter(|(_, c)| matches!(c, Cap::Arr(_)))
        .map(|(k, _)| vec![k.clone()])
        .chain(nested.iter().flat_map(|(p, children)| {
            children
                .iter()
                .filter(|(_, c)| matches!(c, Cap::Arr(_)))
                .map(|(k, _)| vec![(*p).clone(), k.clone()])
        }))
        .collect();
    let all_empty = top
        .iter()
        .all(|(_, c)| !matches!(c, Cap::Arr(_)) || empty(c))
        && nested.iter().all(|(_, ch)| {
            ch.iter()
                .all(|(_, c)| !matches!(c, Cap::Arr(_)) || empty(c))
        });
    let top_level: Vec<&Vec<String>> = arrays.iter().filter(|p| p.len() == 1).collect();
    match (all_empty, top_level.as_slice(), arrays.as_slice()) {
        (true, [only], _) => Some((*only).clone()),
        (true, [], [only]) => Some(only.clone()),
        _ => None,
    }
}

/// Whether an array starts with an object or array (a list of records).
fn holds_records(c: &Cap<'_>) -> bool {
    match c {
        Cap::Arr(a) => a
            .first()
            .is_some_and(|r| r.get().trim_start().starts_with(['{', '['])),
        _ => false,
    }
}

/// Keys (normalised) of paging metadata an envelope carries beside its list.
const ENVELOPE_META: &[&str] = &[
    "hasmore",
    "hasnext",
    "more",
    "done",
    "page",
    "pagesize",
    "pagenumber",
    "perpage",
    "size",
    "limit",
    "offset",
    "cursor",
    "kind",
    "etag",
    "object",
    "url",
    "self",
    "links",
    "meta",
    "metadata",
    "pagination",
    "paging",
    "pageinfo",
    "responsemetadata",
    "last",
    "first",
];

/// G7: whether a body with no item array is a list's envelope with the list left out
/// (protobuf-style JSON omits empty lists: Gmail answers `{"resultSizeEstimate": 0}`),
/// not a record: an empty object; an object of paging metadata only (totals, counts,
/// estimates, next and previous positions, has-more flags); or — when an earlier page of
/// the call held its rows in an envelope, `first` (its frame) — an object whose every
/// key that envelope had too. A key like `id` always makes it a record (E1).
pub(crate) fn bare_envelope(frame: &serde_json::Value, first: Option<&serde_json::Value>) -> bool {
    let serde_json::Value::Object(m) = frame else {
        return false;
    };
    let norm = |k: &str| -> String {
        k.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    if m.keys()
        .any(|k| matches!(norm(k).as_str(), "id" | "uuid" | "guid"))
    {
        return false;
    }
    // a count of rows, not a record's own number (`discount`, `account` are no counts)
    let counts = |k: &str| {
        k == "count"
            || k.starts_with("total")
            || k.ends_with("total")
            || k.ends_with("estimate")
            || (k.ends_with("count")
                && [
                    "row", "result", "item", "record", "hit", "match", "element", "entr",
                ]
                .iter()
                .any(|w| k.contains(w)))
    };
    let meta = |k: &str| {
        let k = norm(k);
        counts(&k)
            || k.starts_with("next")
            || k.starts_with("prev")
            || ENVELOPE_META.contains(&k.as_str())
    };
    if m.keys().all(|k| meta(k)) {
        return true;
    }
    match first {
        Some(serde_json::Value::Object(f)) => m.keys().all(|k| f.contains_key(k)),
        _ => false,
    }
}
