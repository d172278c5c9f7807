//! P12: what an operation's success response says about its paging, kept on the tool as
//! evidence (`x-loopgate-response` at the root of its input schema, read by the engine's
//! `analysis::signals::ResponseKeys`). Frameworks describe their pages in their own
//! documents — fastapi-pagination's `CursorPage.next_page`, DRF's `next`/`count`, Spring's
//! `page.totalElements`, JSON:API's `links.next`/`meta`, HAL's `_links.next.href` — so the
//! key that holds the next cursor or link, the has-more flag or the total is read from the
//! schema instead of guessed from a list. A `Link` header declared on the response is
//! evidence that the API links its next page.
//!
//! Only the first 2xx response with a JSON body is read, its schema's properties to three
//! levels (through `$ref`, `allOf`, `anyOf`, `oneOf`), at most [`MAX_NODES`] schema nodes:
//! the evidence is a few keys, never proportional to the document. Nothing found is no
//! evidence; an unresolvable reference is skipped (the import's own checks report it).

use serde_json::{json, Map, Value};

use super::refs;

/// Schema nodes one operation's response reading may visit.
const MAX_NODES: usize = 400;
/// Levels of properties read below the response's root.
const MAX_DEPTH: usize = 3;

/// Keys (normalised: lower case, letters and digits) of a next-page cursor or link.
const NEXT: &[&str] = &[
    "next",
    "nextpage",
    "nextcursor",
    "nextpagetoken",
    "nexttoken",
    "nextlink",
    "nextpageurl",
    "nextpageuri",
    "nexturl",
    "nexturi",
    "odatanextlink",
    "nextmarker",
    "nextkey",
    "nextpagecursor",
    "continuationtoken",
    "endcursor",
];
const HAS_MORE: &[&str] = &[
    "hasmore",
    "hasnext",
    "hasnextpage",
    "hasmoreitems",
    "hasmorepages",
    "hasmoreresults",
    "moreavailable",
];
const TOTAL: &[&str] = &[
    "total",
    "totalcount",
    "totalresults",
    "totalitems",
    "totalsize",
    "totalrecords",
    "totalelements",
    "totalhits",
    "totalrows",
    "odatacount",
    "resultsizeestimate",
    "filteredtablerowscount",
    "totalestimate",
    "estimatedtotal",
    "count",
];
/// Envelope keys that hold the rows (the engine's G2 list), in order of preference.
const ENVELOPE_KEYS: &[&str] = &[
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
/// Objects whose properties are paging metadata.
const CONTAINERS: &[&str] = &[
    "meta",
    "metadata",
    "pagination",
    "paging",
    "pageinfo",
    "links",
    "page",
    "pager",
    "cursor",
    "cursors",
    "responsemetadata",
];

fn normalize(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The `x-loopgate-response` value for operation `op`, when its success response says
/// anything about paging.
pub(crate) fn evidence(doc: &Value, op: &Map<String, Value>) -> Option<Value> {
    let response = success(doc, op)?;
    let link_header = response
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("link")));
    let mut found = Found::default();
    if let Some(schema) = json_schema(doc, response) {
        let mut budget = MAX_NODES;
        read(doc, schema, &mut Vec::new(), &mut found, &mut budget);
    }
    let mut out = Map::new();
    let mut next_is_link = link_header;
    if let Some((path, link)) = found.next {
        next_is_link |= link;
        out.insert("next".into(), json!(path));
    }
    if let Some(path) = found.has_more {
        out.insert("hasMore".into(), json!(path));
    }
    if let Some((path, _)) = found.total {
        out.insert("total".into(), json!(path));
    }
    if next_is_link {
        out.insert("nextIsLink".into(), json!(true));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// G7, G2: the keys from the success response's root to the item array its schema
/// documents (`["messages"]`, `["data", "items"]`): an array property under an envelope
/// key, else the only array of records, at the top level or one object down. None for a
/// top-level array, a record (an `id`-like property beside the array: `{id, tags: []}`)
/// or a schema with several candidates and no envelope key among them.
pub(crate) fn items_path(doc: &Value, op: &Map<String, Value>) -> Option<Vec<String>> {
    let schema = json_schema(doc, success(doc, op)?)?;
    let props = merged_properties(doc, schema);
    if props
        .iter()
        .any(|(k, _)| matches!(normalize(k).as_str(), "id" | "uuid" | "guid"))
    {
        return None;
    }
    if let Some(k) = pick_array(doc, &props) {
        return Some(vec![k]);
    }
    let objects: Vec<&(String, &Value)> = props
        .iter()
        .filter(|(_, p)| types_of(doc, p).iter().any(|t| t == "object"))
        .take(16)
        .collect();
    let mut found = objects.iter().filter_map(|(k, p)| {
        let inner = merged_properties(doc, p);
        pick_array(doc, &inner).map(|a| vec![k.clone(), a])
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// An object schema's properties (`allOf` parts merged, `$ref`s followed), at most 64.
fn merged_properties<'d>(doc: &'d Value, schema: &'d Value) -> Vec<(String, &'d Value)> {
    let mut out = Vec::new();
    let mut parts = vec![schema];
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        parts.extend(all.iter().take(16).filter_map(|p| deref(doc, p)));
    }
    for part in parts {
        if let Some(props) = part.get("properties").and_then(Value::as_object) {
            for (k, v) in props.iter().take(64) {
                if let Some(v) = deref(doc, v) {
                    out.push((k.clone(), v));
                }
            }
        }
    }
    out
}

/// The array property holding rows: under an envelope key, else the only array whose
/// items are objects.
fn pick_array(doc: &Value, props: &[(String, &Value)]) -> Option<String> {
    let arrays: Vec<&(String, &Value)> = props
        .iter()
        .filter(|(_, p)| types_of(doc, p).iter().any(|t| t == "array"))
        .collect();
    for name in ENVELOPE_KEYS {
        if let Some((k, _)) = arrays.iter().find(|(k, _)| normalize(k) == *name) {
            return Some(k.clone());
        }
    }
    let records: Vec<&&(String, &Value)> = arrays
        .iter()
        .filter(|(_, p)| {
            p.get("items")
                .and_then(|i| deref(doc, i))
                .is_some_and(|i| types_of(doc, i).iter().any(|t| t == "object"))
        })
        .collect();
    match records.as_slice() {
        [only] => Some(only.0.clone()),
        _ => None,
    }
}

/// The first 2xx response (`200`, `2XX`, …) in document order.
fn success<'d>(doc: &'d Value, op: &'d Map<String, Value>) -> Option<&'d Value> {
    let responses = op.get("responses")?.as_object()?;
    let (_, r) = responses.iter().find(|(code, _)| code.starts_with('2'))?;
    deref(doc, r)
}

fn json_schema<'d>(doc: &'d Value, response: &'d Value) -> Option<&'d Value> {
    let content = response.get("content")?.as_object()?;
    let (_, media) = content.iter().find(|(m, _)| {
        let m = m
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        m == "application/json" || m.ends_with("+json") || m == "*/*"
    })?;
    deref(doc, media.get("schema")?)
}

/// The first 2xx response's JSON body schema, its `$ref`s followed.
pub(crate) fn success_schema<'d>(doc: &'d Value, op: &'d Map<String, Value>) -> Option<&'d Value> {
    json_schema(doc, success(doc, op)?)
}

/// A value with its `$ref` chain followed (at most a few hops; a bad one is no evidence).
pub(crate) fn deref<'d>(doc: &'d Value, mut v: &'d Value) -> Option<&'d Value> {
    for _ in 0..8 {
        match refs::ref_of(v) {
            Some(r) if r.starts_with('#') => v = refs::lookup(doc, r)?,
            Some(_) => return None,
            None => return Some(v),
        }
    }
    None
}

#[derive(Default)]
struct Found {
    /// The path of the next cursor or link, and whether it is a link.
    next: Option<(Vec<String>, bool)>,
    has_more: Option<Vec<String>>,
    /// The path of the total, and whether its key is the ambiguous `count`.
    total: Option<(Vec<String>, bool)>,
}

/// Reads one object schema's properties at `path` (combinators merged).
fn read(doc: &Value, schema: &Value, path: &mut Vec<String>, f: &mut Found, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            for part in parts.iter().take(16) {
                if let Some(part) = deref(doc, part) {
                    read(doc, part, path, f, budget);
                }
            }
        }
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let in_links = path
        .last()
        .is_some_and(|k| matches!(normalize(k).as_str(), "links" | "link"));
    for (key, prop) in props {
        let Some(prop) = deref(doc, prop) else {
            continue;
        };
        let k = normalize(key);
        let types = types_of(doc, prop);
        let here = |path: &[String]| {
            let mut p = path.to_vec();
            p.push(key.clone());
            p
        };
        let scalar_string = types.iter().any(|t| t == "string");
        if f.next.is_none() && (NEXT.contains(&k.as_str()) || next_shaped(&k)) {
            if scalar_string {
                let link = in_links
                    || is_uri(doc, prop)
                    || ["url", "uri", "link", "href"].iter().any(|w| k.contains(w));
                f.next = Some((here(path), link));
            } else if types.iter().any(|t| t == "object") {
                // HAL: `_links.next.href`
                let href = prop.get("properties").and_then(|p| p.get("href")).is_some();
                if href {
                    let mut p = here(path);
                    p.push("href".into());
                    f.next = Some((p, true));
                }
            }
        }
        if f.has_more.is_none()
            && HAS_MORE.contains(&k.as_str())
            && types.iter().any(|t| t == "boolean")
        {
            f.has_more = Some(here(path));
        }
        // `count` is often the rows of this page: the total only when nothing better
        let better = match &f.total {
            None => true,
            Some((_, was_count)) => *was_count && k != "count",
        };
        if better
            && TOTAL.contains(&k.as_str())
            && types.iter().any(|t| t == "integer" || t == "number")
        {
            f.total = Some((here(path), k == "count"));
        }
        let container = CONTAINERS.contains(&k.as_str());
        if container && path.len() < MAX_DEPTH && types.iter().any(|t| t == "object") {
            path.push(key.clone());
            read(doc, prop, path, f, budget);
            path.pop();
        }
    }
}

/// A key read as "the next page's position": `next` followed by a word for one.
fn next_shaped(k: &str) -> bool {
    // Salesforce's `nextRecordsUrl`: a link to the next page under its own word
    const WORDS: &[&str] = &[
        "page", "cursor", "token", "marker", "key", "offset", "start", "url", "uri", "link",
    ];
    k.strip_prefix("next")
        .is_some_and(|rest| WORDS.iter().any(|w| rest.contains(w)))
}

/// The types a schema admits: `type` (a string or a list), else those of its
/// `anyOf`/`oneOf` branches (3.1's `anyOf: [{type: string}, {type: null}]`), else
/// `object` when it has properties.
fn types_of(doc: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned)))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            for part in parts.iter().take(8) {
                if let Some(part) = deref(doc, part) {
                    if let Some(t) = part.get("type").and_then(Value::as_str) {
                        out.push(t.to_owned());
                    } else if part.get("properties").is_some() {
                        out.push("object".into());
                    }
                }
            }
        }
    }
    if out.is_empty() && schema.get("properties").is_some() {
        out.push("object".into());
    }
    out
}

/// A string declared as a URI (`format: uri`, `uri-reference`, `url`), here or in an
/// `anyOf` branch.
fn is_uri(doc: &Value, schema: &Value) -> bool {
    let own = schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| matches!(f, "uri" | "url" | "uri-reference" | "iri"));
    own || ["anyOf", "oneOf"].iter().any(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|parts| {
                parts
                    .iter()
                    .take(8)
                    .filter_map(|p| deref(doc, p))
                    .any(|p| is_uri(doc, p))
            })
    })
}
