//! Turns a tool's `input_schema` and the model's arguments into the parts of one HTTP
//! request: the URL (path template filled, query string), argument headers and body.
//! The credential is not added here: [`super::caller`] adds it per hop.
//!
//! Where each argument goes: the property's `x-loopgate-in` (`path`, `query`,
//! `header`, `body`; anything else, e.g. `cookie`, is not sent) under its
//! `x-loopgate-name` (else its key). A hand-defined property without `x-loopgate-in`:
//! a `{placeholder}` of the path template goes to the path, `body` to the body, every
//! other one to the query string, whatever the method. An argument the schema does not
//! declare is an error listing the real parameters, unless the schema declares no
//! `properties` at all; then every argument is placed by the hand-defined rule.

use std::collections::HashMap;

use serde_json::{Map, Value};
use url::Url;

use super::encode::{self, QueryStyle};
use super::CallError;
use loopgate_engine::analysis::signature::backticked;

/// Request headers loopgate owns (framing, routing, connection management); an
/// argument naming one is not sent.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-authorization",
    "proxy-connection",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Path,
    Query,
    Header,
    Body,
    Nowhere,
}

/// One top-level property: where it goes and how (decided once, when the tool's request
/// template is compiled).
#[derive(Debug, Clone)]
struct Param {
    wire: String,
    place: Place,
    /// From `x-loopgate-in`; hand-defined properties follow loopgate's own defaults.
    declared: bool,
    style: Option<String>,
    explode: Option<bool>,
    content_type: Option<String>,
    /// The property names an object value may have (its schema's `properties`): the only
    /// query names a `form`-exploded object may spread into.
    object_keys: Option<Vec<String>>,
}

impl Param {
    fn from_schema(key: &str, prop: &Value, placeholders: &[&str]) -> Self {
        let str_of = |k: &str| prop.get(k).and_then(Value::as_str);
        let wire = str_of("x-loopgate-name").unwrap_or(key);
        let (place, declared) = match str_of("x-loopgate-in") {
            Some("path") => (Place::Path, true),
            Some("query") => (Place::Query, true),
            Some("header") => (Place::Header, true),
            Some("body") => (Place::Body, true),
            Some(_) => (Place::Nowhere, true),
            None => (default_place(wire, placeholders), false),
        };
        Param {
            wire: wire.to_owned(),
            place,
            declared,
            style: str_of("x-loopgate-style").map(str::to_owned),
            explode: prop.get("x-loopgate-explode").and_then(Value::as_bool),
            content_type: str_of("x-loopgate-content-type").map(str::to_owned),
            object_keys: prop
                .get("properties")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect()),
        }
    }

    fn undeclared(key: &str, placeholders: &[&str]) -> Self {
        Param {
            wire: key.to_owned(),
            place: default_place(key, placeholders),
            declared: false,
            style: None,
            explode: None,
            content_type: None,
            object_keys: None,
        }
    }

    /// A `form`-exploded object becomes one query pair per property. Only the properties
    /// its schema declares may be spread, so an argument can never add a query pair the
    /// tool does not declare (another parameter, a paging bound, a credential's name).
    fn check_spread(&self, key: &str, style: QueryStyle, value: &Value) -> Result<(), CallError> {
        let (QueryStyle::Form { explode: true }, Value::Object(map)) = (style, value) else {
            return Ok(());
        };
        let declared = self.object_keys.as_ref().filter(|k| !k.is_empty());
        let undeclared: Vec<&str> = map
            .keys()
            .filter(|k| !declared.is_some_and(|d| d.contains(k)))
            .map(String::as_str)
            .collect();
        if undeclared.is_empty() {
            return Ok(());
        }
        Err(CallError::InvalidArguments(match declared {
            Some(d) => {
                let known: Vec<&str> = d.iter().map(String::as_str).collect();
                format!(
                    "argument `{key}` has unknown propert{} {}; its properties are: {}",
                    if undeclared.len() == 1 { "y" } else { "ies" },
                    backticked(&undeclared),
                    backticked(&known)
                )
            }
            None => format!(
                "argument `{key}` must not be an object: this parameter declares no properties to send"
            ),
        }))
    }

    fn query_style(&self, value: &Value) -> QueryStyle {
        if self.content_type.as_deref().is_some_and(is_json) {
            return QueryStyle::Json;
        }
        match self.style.as_deref() {
            Some("deepObject") => QueryStyle::DeepObject,
            Some("spaceDelimited") => QueryStyle::SpaceDelimited,
            Some("pipeDelimited") => QueryStyle::PipeDelimited,
            Some(_) => QueryStyle::Form {
                explode: self.explode.unwrap_or(true),
            },
            // OpenAPI's default for an imported parameter (and for a hand-defined
            // array); JSON text for a hand-defined object, which no style describes.
            None if self.declared || !value.is_object() => QueryStyle::Form {
                explode: self.explode.unwrap_or(true),
            },
            None => QueryStyle::Json,
        }
    }
}

fn default_place(name: &str, placeholders: &[&str]) -> Place {
    if placeholders.contains(&name) {
        Place::Path
    } else if name == "body" {
        Place::Body
    } else {
        Place::Query
    }
}

fn is_json(media: &str) -> bool {
    let base = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    base == "application/json" || base.ends_with("+json")
}

/// The `{name}` placeholders of a path template, in order.
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push(&after[..close]);
        rest = &after[close + 1..];
    }
    out
}

/// A request body ready to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Body {
    pub(crate) content_type: String,
    pub(crate) bytes: Vec<u8>,
}

/// The request as the arguments define it, before the credential.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Built {
    pub(crate) url: Url,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Option<Body>,
}

/// Parses a provider's base URL.
pub(crate) fn base_url(base: &str) -> Result<Url, CallError> {
    let url = Url::parse(base.trim()).map_err(|e| {
        CallError::Misconfigured(format!("the provider's base_url is invalid: {e}"))
    })?;
    if url.cannot_be_a_base() {
        return Err(CallError::Misconfigured(
            "the provider's base_url is not an http(s) URL".into(),
        ));
    }
    Ok(url)
}

/// A tool's request, compiled once per tool and provider version: the base URL parsed,
/// the path template's placeholders found, and each declared argument's place, wire name
/// and style decided. [`Template::build`] then only encodes the arguments of one request
/// (every page and retry of a walk reuses it).
#[derive(Debug, Clone)]
pub struct Template {
    base_raw: String,
    /// `None`: the base URL does not parse (reported when a request is built).
    base: Option<Url>,
    path: String,
    /// `None`: the schema declares no properties; every argument is placed by the
    /// hand-defined rule.
    params: Option<Vec<(String, Param)>>,
}

impl Template {
    pub fn compile(base: &str, path: &str, schema: &Value) -> Self {
        let holes = placeholders(path);
        let params = schema
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty())
            .map(|props| {
                props
                    .iter()
                    .map(|(k, p)| (k.clone(), Param::from_schema(k, p, &holes)))
                    .collect()
            });
        Template {
            base_raw: base.to_owned(),
            base: base_url(base).ok(),
            path: path.to_owned(),
            params,
        }
    }

    /// The provider's base URL as written.
    pub fn base_url(&self) -> &str {
        &self.base_raw
    }

    /// O1: the request's path template (`url.template`): the base URL's path joined to
    /// the tool's path, placeholders kept (`/v2/contacts/{id}`), its fixed query left out.
    pub fn url_template(&self) -> Option<String> {
        let base = self.base.as_ref()?;
        let path = self.path.split('?').next().unwrap_or_default();
        Some(format!(
            "{}/{}",
            base.path().trim_end_matches('/'),
            path.trim_start_matches('/')
        ))
    }

    /// The parsed base URL, or why it does not parse.
    pub(crate) fn base(&self) -> Result<Url, CallError> {
        match &self.base {
            Some(u) => Ok(u.clone()),
            None => base_url(&self.base_raw),
        }
    }

    /// The request for these arguments. An argument the schema does not declare is
    /// refused (the engine refuses it first, with the tool's argument list: this is the
    /// builder's own guard, so nothing undeclared is ever sent).
    pub(crate) fn build(&self, args: &Map<String, Value>) -> Result<Built, CallError> {
        let template = self.path.as_str();
        let holes = placeholders(template);
        let undeclared: Vec<(String, Param)>;
        let params: Vec<(&str, &Param)> = match &self.params {
            Some(params) => {
                let unknown: Vec<&str> = args
                    .keys()
                    .filter(|k| !params.iter().any(|(p, _)| p == *k))
                    .map(String::as_str)
                    .collect();
                if !unknown.is_empty() {
                    let known: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
                    return Err(CallError::InvalidArguments(format!(
                        "unknown argument{} {}; this tool's arguments are: {}",
                        if unknown.len() == 1 { "" } else { "s" },
                        backticked(&unknown),
                        backticked(&known)
                    )));
                }
                params.iter().map(|(k, p)| (k.as_str(), p)).collect()
            }
            None => {
                undeclared = args
                    .keys()
                    .map(|k| (k.clone(), Param::undeclared(k, &holes)))
                    .collect();
                undeclared.iter().map(|(k, p)| (k.as_str(), p)).collect()
            }
        };
        let params: Vec<(&str, &Param)> = params
            .into_iter()
            .filter(|(_, p)| p.place != Place::Nowhere)
            .collect();

        let filled = fill_path(template, &holes, &params, args)?;
        // A hand-written template may carry a fixed query (`/search?type=repo`); values
        // are encoded, so the first `?` left is the template's own.
        let (path, fixed_query) = match filled.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (filled.as_str(), None),
        };
        let mut url = self.base()?;
        let joined = format!(
            "{}/{}",
            url.path().trim_end_matches('/'),
            path.trim_start_matches('/')
        );
        url.set_path(&joined);
        if let Some(fixed) = fixed_query.filter(|q| !q.is_empty()) {
            let query = match url.query().filter(|q| !q.is_empty()) {
                Some(existing) => format!("{existing}&{fixed}"),
                None => fixed.to_string(),
            };
            url.set_query(Some(&query));
        }
        place_values(url, &params, args)
    }
}

/// Compiles and builds in one go (tests, one-off requests).
#[cfg(test)]
pub(crate) fn build(
    base: &str,
    template: &str,
    schema: &Value,
    args: &Map<String, Value>,
) -> Result<Built, CallError> {
    Template::compile(base, template, schema).build(args)
}

/// The query string, headers and body of one request, from the placed arguments.
fn place_values(
    mut url: Url,
    params: &[(&str, &Param)],
    args: &Map<String, Value>,
) -> Result<Built, CallError> {
    let mut query = Vec::new();
    let mut headers = Vec::new();
    let mut body = None;
    for (key, param) in params {
        let Some(value) = args.get(*key).filter(|v| !v.is_null()) else {
            continue;
        };
        match param.place {
            Place::Query => {
                let style = param.query_style(value);
                param.check_spread(key, style, value)?;
                query.extend(encode::query_pairs(&param.wire, value, style))
            }
            Place::Header => {
                if let Some(header) = header_value(key, param, value)? {
                    headers.push(header);
                }
            }
            Place::Body => body = Some(body_of(key, param, value)?),
            Place::Path | Place::Nowhere => {}
        }
    }
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in &query {
            pairs.append_pair(k, v);
        }
    }
    Ok(Built { url, headers, body })
}

/// The template with every placeholder replaced by its percent-encoded value.
fn fill_path(
    template: &str,
    holes: &[&str],
    params: &[(&str, &Param)],
    args: &Map<String, Value>,
) -> Result<String, CallError> {
    let by_wire: HashMap<&str, (&str, &Param)> = params
        .iter()
        .filter(|(_, p)| p.place == Place::Path)
        .map(|(k, p)| (p.wire.as_str(), (*k, *p)))
        .collect();
    let mut values = HashMap::new();
    let mut missing = Vec::new();
    for hole in holes {
        let (key, param) = by_wire
            .get(hole)
            .copied()
            .unwrap_or((hole, &UNDECLARED_PATH));
        match args.get(key).filter(|v| !v.is_null()) {
            Some(value) => {
                let explode = param.explode.unwrap_or(false);
                values.insert(
                    *hole,
                    encode::simple(value, explode, &encode::encode_component),
                );
            }
            None => missing.push(key),
        }
    }
    if !missing.is_empty() {
        return Err(CallError::InvalidArguments(format!(
            "missing required path parameter{} {}",
            if missing.len() == 1 { "" } else { "s" },
            backticked(&missing)
        )));
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push_str(&rest[..open]);
        out.push_str(values.get(&after[..close]).map_or("", String::as_str));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    // `.` and `..` survive percent-encoding as path segments (and `%2E%2E` is one too
    // for URL parsers), so a value making one is refused rather than sent.
    let path_part = out.split('?').next().unwrap_or("");
    if path_part.split('/').any(|seg| {
        let seg = seg.to_ascii_lowercase().replace("%2e", ".");
        seg == "." || seg == ".."
    }) {
        return Err(CallError::InvalidArguments(
            "a path parameter cannot be `.` or `..`".into(),
        ));
    }
    Ok(out)
}

static UNDECLARED_PATH: Param = Param {
    wire: String::new(),
    place: Place::Path,
    declared: false,
    style: None,
    explode: None,
    content_type: None,
    object_keys: None,
};

fn header_value(
    key: &str,
    param: &Param,
    value: &Value,
) -> Result<Option<(String, String)>, CallError> {
    if RESERVED_HEADERS.contains(&param.wire.to_ascii_lowercase().as_str()) {
        return Ok(None);
    }
    if value.is_object()
        && param.content_type.as_deref().is_none_or(|m| !is_json(m))
        && !param.declared
    {
        return Err(CallError::InvalidArguments(format!(
            "`{key}` is a header: give a string"
        )));
    }
    let text = if param.content_type.as_deref().is_some_and(is_json) {
        value.to_string()
    } else {
        encode::simple(value, param.explode.unwrap_or(false), &str::to_string)
    };
    if text.contains(['\r', '\n', '\0']) {
        return Err(CallError::InvalidArguments(format!(
            "`{key}` is a header and cannot contain line breaks"
        )));
    }
    Ok(Some((param.wire.to_string(), text)))
}

fn body_of(key: &str, param: &Param, value: &Value) -> Result<Body, CallError> {
    let media = param.content_type.as_deref().unwrap_or("application/json");
    let base = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let bytes = if base == "application/x-www-form-urlencoded" {
        let Value::Object(map) = value else {
            return Err(CallError::InvalidArguments(format!(
                "`{key}` is a form body: give an object"
            )));
        };
        encode::form_body(map)
    } else if base.starts_with("multipart/") {
        return Err(CallError::InvalidArguments(format!(
            "`{key}` is a {base} body, which loopgate cannot send"
        )));
    } else if !is_json(&base) && value.is_string() {
        // text/plain, application/xml, …: a string argument is the body itself.
        value.as_str().unwrap_or_default().as_bytes().to_vec()
    } else {
        serde_json::to_vec(value)
            .map_err(|e| CallError::InvalidArguments(format!("`{key}`: {e}")))?
    };
    let content_type =
        if is_json(&base) || base == "application/x-www-form-urlencoded" || value.is_string() {
            media.to_string()
        } else {
            "application/json".to_string()
        };
    Ok(Body {
        content_type,
        bytes,
    })
}
