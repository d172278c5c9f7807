//! P2, P10, P11: how a collection pages — its [`Style`] (one request, page number, offset
//! or cursor), its first request from the start (a page number where the schema points,
//! or none when the schema contradicts itself: [`crate::walk::first_page`]) or from where a
//! call before left it ([`start`]), where its next request would start ([`position`]),
//! when a numbered walk has reached its end, and the paging arguments it reads and writes
//! (top level or in `body`).

use serde_json::{json, Map, Value};

use crate::analysis::first_page::{schema_base, Strength};
use crate::analysis::signals::Signals;
use crate::analysis::{Param, ToolAnalysis};
use crate::error::EngineError;
use crate::learned::Learned;
use crate::limits::Limits;
use crate::plan::CallPlan;
use crate::ports::Upstream;
use crate::resume::{Pending, Position};
use crate::walk::first_page::FirstPage;

/// P10: a `_continue` that does not fit this call.
pub(crate) fn stale() -> EngineError {
    EngineError::invalid(
        "`_continue` no longer matches this call: call the tool again without `_continue` to start a fresh walk.",
    )
}

/// How a collection pages, and where its next request goes.
#[derive(Clone)]
pub(crate) enum Style {
    Single,
    Page(Param, i64),
    Offset(Param, u64),
    Cursor(Param),
    /// P12: no paging parameter, but the API links its next page (its response schema
    /// says so): the walk follows the links.
    Link,
}

/// Where a collection's walk begins: its first request and how it pages.
pub(crate) struct Start {
    pub args: Map<String, Value>,
    pub style: Style,
    pub size: Option<u64>,
    pub next_url: Option<String>,
    /// P11: how a page-number walk from the start establishes its first page.
    pub first: FirstPage,
}

/// The first request of a collection, from its start or from where a call before left it
/// (P10), and how it pages — from what the tool's walks established (P14: `learned`, the
/// call's own values before this one included).
#[allow(clippy::too_many_arguments)]
pub(crate) fn start<U: Upstream>(
    plan: &CallPlan,
    analysis: &ToolAnalysis,
    learned: &Learned,
    limits: &Limits,
    upstream: &U,
    value: Option<&Value>,
    from: &Pending,
) -> Result<Start, EngineError> {
    let mut args = plan.upstream_args.clone();
    if let (Some(f), Some(v)) = (&plan.for_each, value) {
        set_arg(&mut args, &f.key, f.in_body, v.clone());
    }
    let mut size = analysis
        .page_size
        .as_ref()
        .and_then(|p| get_arg(&args, p).and_then(as_u64));
    let mut style = Style::Single;
    let mut first = FirstPage::off();
    if plan.all_pages {
        if let Some(p) = &analysis.page_size {
            let chosen = p
                .maximum
                .unwrap_or(u64::from(limits.default_page_size))
                .max(1);
            // P14: a size the API caps silently is asked for as it is given
            let chosen = learned.size_cap.map_or(chosen, |c| chosen.min(c.max(1)));
            set_arg(&mut args, &p.name, p.in_body, p.number(chosen));
            size = Some(chosen);
        }
        style = match (
            &analysis.page_size,
            &analysis.offset,
            &analysis.page_number,
            &analysis.cursor,
        ) {
            (Some(_), Some(o), _, _) => {
                let at = get_arg(&args, o).and_then(as_u64).unwrap_or(0);
                set_arg(&mut args, &o.name, o.in_body, o.number(at));
                Style::Offset(o.clone(), at)
            }
            (Some(_), None, Some(p), _) => {
                // P11: the agent's page, else where the evidence puts the first page
                let given = get_arg(&args, p).and_then(Value::as_i64);
                let base = schema_base(p);
                let ours = given.is_none() && from.at == Position::Start;
                // P14: where earlier walks found the first page, unless the schema is firm
                let known = learned
                    .page_base
                    .filter(|_| base.strength != Strength::Firm);
                let n = given.or(known).unwrap_or(base.page);
                first = match known {
                    Some(b) => FirstPage::learned(b, ours),
                    None => FirstPage::new(base, ours),
                };
                if first.probes() {
                    remove_arg(&mut args, p);
                } else {
                    set_arg(&mut args, &p.name, p.in_body, p.number(page_no(n)));
                }
                Style::Page(p.clone(), n)
            }
            (_, _, _, Some(c)) => Style::Cursor(c.clone()),
            _ if analysis.link_walkable() => Style::Link,
            _ => Style::Single,
        };
    }
    let mut next_url: Option<String> = None;
    match (&mut style, &from.at) {
        (_, Position::Start) => {}
        (Style::Page(p, number), Position::Page(at)) => {
            *number = *at;
            set_arg(&mut args, &p.name, p.in_body, json!(*at));
        }
        (Style::Offset(p, offset), Position::Offset(at)) => {
            *offset = *at;
            set_arg(&mut args, &p.name, p.in_body, json!(*at));
        }
        (Style::Cursor(p), Position::Cursor(at)) => {
            set_arg(&mut args, &p.name, p.in_body, at.clone());
        }
        (Style::Cursor(_) | Style::Link, Position::Url(url)) => {
            next_url = Some(upstream.follow(url).ok_or_else(stale)?);
        }
        _ => return Err(stale()),
    }
    Ok(Start {
        args,
        style,
        size,
        next_url,
        first,
    })
}

/// P10: where the collection's next request would start.
pub(crate) fn position(
    style: &Style,
    next_url: &Option<String>,
    args: &Map<String, Value>,
) -> Position {
    match style {
        Style::Single => Position::Start,
        Style::Link => match next_url {
            Some(url) => Position::Url(url.clone()),
            None => Position::Start,
        },
        Style::Page(_, n) => Position::Page(*n),
        Style::Offset(_, at) => Position::Offset(*at),
        Style::Cursor(p) => match (next_url, get_arg(args, p)) {
            (Some(url), _) => Position::Url(url.clone()),
            (None, Some(v)) if !v.is_null() && v.as_str() != Some("") => {
                Position::Cursor(v.clone())
            }
            _ => Position::Start,
        },
    }
}

pub(crate) fn page_no(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Whether the arguments ask for the first page: no page number past the first, no offset,
/// no cursor.
pub(crate) fn starts_at_first_page(a: &ToolAnalysis, args: &Map<String, Value>) -> bool {
    let unset = |p: &Option<Param>, first: &dyn Fn(&Param, &Value) -> bool| match p {
        Some(p) => match get_arg(args, p) {
            None | Some(Value::Null) => true,
            Some(v) => first(p, v),
        },
        None => true,
    };
    unset(&a.page_number, &|p, v| {
        let start = schema_base(p).page;
        v.as_i64().or_else(|| v.as_str()?.parse().ok()) == Some(start)
    }) && unset(&a.offset, &|_, v| as_u64(v) == Some(0))
        && unset(&a.cursor, &|_, v| v.as_str().is_some_and(str::is_empty))
}

/// P2 for page-number and offset walks: an empty page, an explicit "no more", the
/// announced total reached, or a short page the API does not contradict.
pub(crate) fn end_of_numbered(
    n: usize,
    size: Option<u64>,
    sig: &Signals,
    more: bool,
    total: Option<u64>,
    fetched: usize,
) -> bool {
    n == 0
        || sig.has_more == Some(false)
        || total.is_some_and(|t| fetched as u64 >= t)
        || (size.is_some_and(|s| (n as u64) < s) && !more)
}

pub(crate) fn get_arg<'a>(args: &'a Map<String, Value>, p: &Param) -> Option<&'a Value> {
    if p.in_body {
        args.get("body")?.get(&p.name)
    } else {
        args.get(&p.name)
    }
}

pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

/// Leaves parameter `p` out of the request (P11: the API's own first page).
pub(crate) fn remove_arg(args: &mut Map<String, Value>, p: &Param) {
    if !p.in_body {
        args.remove(&p.name);
    } else if let Some(Value::Object(body)) = args.get_mut("body") {
        body.remove(&p.name);
    }
}

pub(crate) fn set_arg(args: &mut Map<String, Value>, name: &str, in_body: bool, v: Value) {
    if !in_body {
        args.insert(name.to_owned(), v);
        return;
    }
    let body = args.entry("body").or_insert_with(|| json!({}));
    if !body.is_object() {
        *body = json!({});
    }
    if let Value::Object(m) = body {
        m.insert(name.to_owned(), v);
    }
}
