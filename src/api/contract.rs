//! The rules every operation of the OpenAPI document follows, applied in one pass after
//! the handlers' own `#[utoipa::path]` annotations, so that a route added anywhere
//! inherits them without repeating them:
//! - security schemes: `adminToken`, `orgKey` (the scope it needs as its role, e.g.
//!   `("orgKey" = ["studio"])`) and `runtimeToken`; an operation names the ones it takes;
//! - `operationId`: an explicit camelCase id (`operation_id = "createToolCall"`) is kept,
//!   anything else (utoipa's default is the handler's name) is replaced by one derived from
//!   the method and path (`GET /v1/things` → `listThings`, `PATCH /v1/a/{a_id}/bs/{b_id}`
//!   → `updateAB`), so ids are unique and meaningful to client generators;
//! - errors: every status the shared layers answer with — authentication (401, 403),
//!   the per-org rate limit and the failed-authentication throttle (429), unknown objects (404), bodies and query strings that do
//!   not parse or fit (400, 422), the database (500, 503) — is declared where it applies,
//!   and every error response is `application/problem+json` with the `Problem` schema;
//! - every response has a description, and 429/503 declare `Retry-After`.
//!
//! `tests/api/studio/openapi_doc.rs` checks the result, and that the document and the route
//! table (`routes::ROUTES`) describe the same operations.

use utoipa::openapi::header::Header;
use utoipa::openapi::path::{Operation, ParameterIn, PathItem};
use utoipa::openapi::response::Response;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayItems, Object, Ref, Schema, SchemaType, Type,
};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, OpenApi, RefOr};
use utoipa::Modify;

/// Security scheme: the platform admin token from configuration.
pub const ADMIN: &str = "adminToken";
/// Security scheme: an org API key (`lgk_…`); its role is the scope the route needs.
pub const ORG_KEY: &str = "orgKey";
/// Security scheme: a runtime token (JWT) minted with `POST /v1/runtime-tokens`.
pub const RUNTIME: &str = "runtimeToken";

pub const PROBLEM_JSON: &str = "application/problem+json";

/// Each error status the shared layers produce: (status, component name, description).
const ERRORS: &[(u16, &str, &str)] = &[
    (400, "BadRequest", "The request is malformed (`validation_failed`): the body is not JSON or not sent as `Content-Type: application/json`, or a path or query parameter does not parse or holds a control character."),
    (401, "Unauthorized", "No bearer token, or one that is unknown, revoked or expired (`unauthorized`)."),
    (403, "Forbidden", "The token is valid but may not call this operation (`forbidden`): another kind of token, or an org key without the scope."),
    (404, "NotFound", "No such object (`not_found`); another org's or another caller's object is a 404 too."),
    (409, "Conflict", "The request conflicts with the current state (`conflict`)."),
    (410, "Gone", "The object existed but has expired."),
    (422, "UnprocessableContent", "The body is well-formed JSON but breaks a rule of this operation (`validation_failed`); `detail` names the field."),
    (429, "TooManyRequests", "Too many requests for this org, or too many failed authentications from this address (`rate_limited`); retry after `Retry-After` seconds."),
    (500, "InternalError", "An internal error (`internal_error`); it was logged and none of it is shown."),
    (502, "BadGateway", "The upstream API failed (`upstream_failed`); `detail` says what was learned from it."),
    (503, "Unavailable", "A dependency (Postgres, Redis) is unavailable (`unavailable`); retry after `Retry-After` seconds."),
];

/// The `Modify` pass applying the rules above; listed last in `ApiDoc`'s modifiers.
pub struct Contract;

impl Modify for Contract {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, format, what) in [
            (ADMIN, "opaque", "The platform admin token from configuration (`LOOPGATE_ADMIN_TOKEN`)."),
            (ORG_KEY, "lgk_…", "An org API key (`POST /v1/orgs/{org_id}/api-keys`); the role named in an operation's requirement is the scope the key needs (`studio`, `mint`, `runtime`)."),
            (RUNTIME, "JWT", "A runtime token minted by a customer backend (`POST /v1/runtime-tokens`)."),
        ] {
            let scheme = HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format(format)
                .description(Some(what))
                .build();
            components.add_security_scheme(name, SecurityScheme::Http(scheme));
        }
        for (status, name, _) in ERRORS {
            components
                .responses
                .insert((*name).into(), RefOr::T(problem_response(*status)));
        }
        for schema in components.schemas.values_mut() {
            open_free_form(schema);
        }
        for (path, item) in doc.paths.paths.iter_mut() {
            for (method, op) in operations(item) {
                apply(method, path, op);
            }
        }
    }
}

/// A free-form object (`type: object` with no properties, e.g. a tool's `input_schema` or
/// its arguments) says `additionalProperties: true`, so generated clients type it as a
/// map of any values rather than an empty object.
fn open_free_form(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else { return };
    match schema {
        Schema::Object(o) => {
            let is_object = matches!(&o.schema_type, SchemaType::Type(Type::Object))
                || matches!(&o.schema_type, SchemaType::Array(ts) if ts.contains(&Type::Object));
            if is_object && o.properties.is_empty() && o.additional_properties.is_none() {
                o.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(true)));
            }
            o.properties.values_mut().for_each(open_free_form);
            if let Some(AdditionalProperties::RefOr(inner)) = o.additional_properties.as_deref_mut()
            {
                open_free_form(inner);
            }
        }
        Schema::Array(a) => {
            if let ArrayItems::RefOrSchema(items) = &mut a.items {
                open_free_form(items);
            }
        }
        Schema::OneOf(x) => x.items.iter_mut().for_each(open_free_form),
        Schema::AllOf(x) => x.items.iter_mut().for_each(open_free_form),
        Schema::AnyOf(x) => x.items.iter_mut().for_each(open_free_form),
        _ => {}
    }
}

/// The operations of a path item with their lower-case method names.
pub fn operations(item: &mut PathItem) -> impl Iterator<Item = (&'static str, &mut Operation)> {
    [
        ("get", item.get.as_mut()),
        ("put", item.put.as_mut()),
        ("post", item.post.as_mut()),
        ("delete", item.delete.as_mut()),
        ("patch", item.patch.as_mut()),
        ("head", item.head.as_mut()),
        ("options", item.options.as_mut()),
        ("trace", item.trace.as_mut()),
    ]
    .into_iter()
    .filter_map(|(m, op)| op.map(|op| (m, op)))
}

/// Declares every `{name}` of the path as a required string path parameter when the
/// handler's annotation did not (utoipa infers them only from `web::Path` arguments).
fn declare_path_parameters(path: &str, op: &mut Operation) {
    for name in path
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
    {
        let params = op.parameters.get_or_insert_with(Vec::new);
        let declared = params.iter().any(|p| match p {
            RefOr::T(p) => p.name == name && p.parameter_in == ParameterIn::Path,
            RefOr::Ref(_) => false,
        });
        if !declared {
            let param = utoipa::openapi::path::ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(utoipa::openapi::Required::True)
                .schema(Some(Object::with_type(Type::String)))
                .build();
            params.push(RefOr::T(param));
        }
    }
}

/// What a path or query parameter's value may hold: no control character (`clean_ids`
/// refuses one with 400), as an ECMA-262 pattern.
pub const NO_CONTROL_CHARACTERS: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// Every string path or query parameter says it holds no control character.
fn forbid_control_characters(op: &mut Operation) {
    for p in op.parameters.iter_mut().flatten() {
        let RefOr::T(p) = p else { continue };
        if !matches!(p.parameter_in, ParameterIn::Path | ParameterIn::Query) {
            continue;
        }
        if let Some(RefOr::T(Schema::Object(o))) = p.schema.as_mut() {
            let string = matches!(&o.schema_type, SchemaType::Type(Type::String))
                || matches!(&o.schema_type, SchemaType::Array(ts) if ts.contains(&Type::String));
            if string && o.pattern.is_none() {
                o.pattern = Some(NO_CONTROL_CHARACTERS.into());
            }
        }
    }
}

fn apply(method: &str, path: &str, op: &mut Operation) {
    declare_path_parameters(path, op);
    forbid_control_characters(op);
    let explicit = op.operation_id.as_deref().filter(|id| is_camel(id));
    if explicit.is_none() {
        op.operation_id = Some(derived_id(method, path));
    }
    let schemes = security_schemes(op);
    let mut implied = Vec::new();
    if !schemes.is_empty() {
        // 429 too: failed authentications are throttled per address (`auth::guard`),
        // before any token is looked at, the admin token's operations included
        implied.extend([401, 403, 429]);
    }
    if path.contains('{') {
        implied.push(404);
    }
    let has_query = op.parameters.iter().flatten().any(|p| match p {
        RefOr::T(p) => p.parameter_in == ParameterIn::Query,
        RefOr::Ref(_) => false,
    });
    if op.request_body.is_some() || has_query {
        implied.extend([400, 422]);
    }
    if path.contains('{') {
        // an id holding a control character (`clean_ids`)
        implied.push(400);
    }
    if path.starts_with("/v1/") {
        implied.extend([500, 503]);
    }
    let responses = &mut op.responses.responses;
    for status in implied {
        if let Some((_, name, _)) = ERRORS.iter().find(|(s, _, _)| *s == status) {
            responses
                .entry(status.to_string())
                .or_insert_with(|| RefOr::Ref(Ref::from_response_name(*name)));
        }
    }
    for (status, response) in responses.iter_mut() {
        if let RefOr::T(r) = response {
            complete(status, r);
        }
    }
}

/// Gives a declared response its description and, for an error, the problem+json body.
fn complete(status: &str, r: &mut Response) {
    let code: u16 = status.parse().unwrap_or(0);
    if code >= 400 {
        // an error declared as JSON is a problem; one declared as both (a protocol's own
        // error besides the problem: the MCP endpoint's JSON-RPC errors) keeps both
        if !r.content.contains_key(PROBLEM_JSON) {
            if let Some(content) = r.content.shift_remove("application/json") {
                r.content.insert(PROBLEM_JSON.into(), content);
            }
        }
        if r.content.is_empty() {
            r.content
                .insert(PROBLEM_JSON.into(), RefOr::T(problem_content()));
        }
        add_headers(code, r);
    }
    if r.description.is_empty() {
        r.description = match ERRORS.iter().find(|(s, _, _)| *s == code) {
            Some((_, _, what)) => (*what).into(),
            None => match code {
                200 => "OK".into(),
                201 => "Created".into(),
                202 => "Accepted".into(),
                204 => "Done; no content".into(),
                302 => "Redirect".into(),
                _ => format!("HTTP {status}"),
            },
        };
    }
}

fn problem_content() -> Content {
    Content::new(Some(Ref::from_schema_name("Problem")))
}

fn problem_response(status: u16) -> Response {
    let what = ERRORS
        .iter()
        .find(|(s, _, _)| *s == status)
        .map(|(_, _, w)| *w)
        .unwrap_or_default();
    let mut r = Response::new(what);
    r.content
        .insert(PROBLEM_JSON.into(), RefOr::T(problem_content()));
    add_headers(status, &mut r);
    r
}

fn add_headers(status: u16, r: &mut Response) {
    let (name, what, ty) = match status {
        429 | 503 => (
            "Retry-After",
            "Seconds to wait before retrying.",
            Type::Integer,
        ),
        401 => (
            "WWW-Authenticate",
            "`Bearer`: the scheme to authenticate with.",
            Type::String,
        ),
        _ => return,
    };
    let mut h = Header::new(Object::with_type(ty));
    h.description = Some(what.into());
    r.headers.entry(name.into()).or_insert(RefOr::T(h));
}

/// The security scheme names an operation accepts (any requirement).
pub fn security_schemes(op: &Operation) -> Vec<String> {
    let mut names = Vec::new();
    for req in op.security.iter().flatten() {
        if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(req) {
            names.extend(m.keys().cloned());
        }
    }
    names
}

/// `createToolCall`-style: starts lower case, has an upper-case letter, only alphanumerics.
pub fn is_camel(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id.chars().any(|c| c.is_ascii_uppercase())
        && id.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `GET /v1/agents` → `listAgents`; `POST /v1/agents` → `createAgent`;
/// `GET /v1/agents/{agent_id}/tools/{tool_id}` → `getAgentTool`; a non-plural last
/// segment is an action or a singleton (`POST /v1/providers/{id}/sync` → `postProviderSync`).
pub fn derived_id(method: &str, path: &str) -> String {
    let segs: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != "v1")
        .collect();
    let is_param = |s: &str| s.starts_with('{');
    let item = segs.last().is_some_and(|s| is_param(s));
    let literals: Vec<(usize, &str)> = segs
        .iter()
        .enumerate()
        .filter(|(_, s)| !is_param(s))
        .map(|(i, s)| (i, *s))
        .collect();
    let Some(&(at, noun)) = literals.last() else {
        return format!("{method}Root");
    };
    // the resource this one hangs under (`/agents/{agent_id}/tools`), or the literal
    // right before it (`/connect/callback`)
    let parent = match literals.len() {
        n if n >= 2 && literals[n - 2].0 + 2 == at => pascal(singular(literals[n - 2].1)),
        n if n >= 2 && literals[n - 2].0 + 1 == at => pascal(literals[n - 2].1),
        _ => String::new(),
    };
    let plural = noun.ends_with('s');
    let (verb, noun) = match (method, item, plural) {
        (_, true, _) => (item_verb(method), pascal(singular(noun))),
        ("get", false, true) => ("list", pascal(noun)),
        ("post", false, true) => ("create", pascal(singular(noun))),
        (m, _, _) => (item_verb(m), pascal(noun)),
    };
    format!("{verb}{parent}{noun}")
}

fn item_verb(method: &str) -> &'static str {
    match method {
        "get" => "get",
        "patch" => "update",
        "put" => "replace",
        "delete" => "delete",
        "post" => "post",
        "head" => "head",
        "options" => "options",
        _ => "call",
    }
}

fn singular(noun: &str) -> String {
    if let Some(stem) = noun.strip_suffix("ies") {
        format!("{stem}y")
    } else {
        noun.strip_suffix('s').unwrap_or(noun).to_string()
    }
}

fn pascal(s: impl AsRef<str>) -> String {
    s.as_ref()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_read_like_the_route() {
        for (m, p, id) in [
            ("get", "/v1/agents", "listAgents"),
            ("post", "/v1/agents", "createAgent"),
            ("get", "/v1/agents/{agent_id}", "getAgent"),
            (
                "patch",
                "/v1/agents/{agent_id}/tools/{tool_id}",
                "updateAgentTool",
            ),
            ("get", "/v1/orgs/{org_id}/api-keys", "listOrgApiKeys"),
            (
                "get",
                "/v1/tool-calls/{call_id}/events",
                "listToolCallEvents",
            ),
            (
                "post",
                "/v1/providers/{provider_id}/sync",
                "postProviderSync",
            ),
            ("get", "/v1/connections", "listConnections"),
            (
                "delete",
                "/v1/connections/{connection_id}",
                "deleteConnection",
            ),
            ("get", "/connect/callback", "getConnectCallback"),
            ("get", "/healthz", "getHealthz"),
        ] {
            assert_eq!(derived_id(m, p), id, "{m} {p}");
            assert!(is_camel(id));
        }
        assert!(!is_camel("tool_call") && !is_camel("list") && is_camel("createToolCall"));
    }
}
