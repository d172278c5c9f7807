//! Studio: tools, defined by hand or imported from an OpenAPI document.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::store::providers;
use crate::store::tool_paging;
use crate::store::tools::{self, Tool, ToolFields, ToolKind};
use loopgate_engine::analysis::summary::{
    summarize, Confidence, PagingParams, PagingSource, PagingStyle,
};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolInput {
    pub provider_id: String,
    /// `[A-Za-z0-9_-]{1,64}`, unique per provider.
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub method: String,
    /// Path template below the provider's base URL, e.g. `/repos/{owner}/{repo}/issues`.
    pub path: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
    /// Defaults to the provider's kind.
    pub kind: Option<ToolKind>,
    pub toolkit: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub method: Option<String>,
    pub path: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub input_schema: Option<Value>,
    pub kind: Option<ToolKind>,
    pub toolkit: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ToolFilter {
    /// Only the tools of this provider.
    pub provider_id: Option<String>,
}

/// The tools an import created.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportedTools {
    pub data: Vec<Tool>,
    /// D6: how many of these tools' search vectors are being computed in the background
    /// (0 when search runs without the embedding model). Until a tool's vector is ready
    /// `search_tools` ranks it by its words and says so.
    pub vectors_pending: usize,
}

const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE",
];

/// Checks a tool definition; each message names the field and what to change.
pub fn check(f: ToolFields) -> Result<ToolFields, ApiError> {
    check_fields(f, true)
}

/// [`check`]; `hint` is false for a patch that leaves `input_schema` as stored, so a
/// tool written before a hint rule was tightened can still be renamed or described
/// (its stored hint is judged when the schema is next written).
fn check_fields(mut f: ToolFields, hint: bool) -> Result<ToolFields, ApiError> {
    let valid_name = !f.name.is_empty()
        && f.name.len() <= 64
        && f.name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(ApiError::invalid("name must match [A-Za-z0-9_-]{1,64}"));
    }
    f.method = f.method.to_ascii_uppercase();
    if !METHODS.contains(&f.method.as_str()) {
        return Err(ApiError::invalid(format!(
            "method must be one of {}",
            METHODS.join(", ")
        )));
    }
    if !f.path.starts_with('/') || f.path.contains("://") || f.path.contains('#') {
        return Err(ApiError::invalid(
            "path must be a path template starting with '/', e.g. /items/{id}",
        ));
    }
    let Some(schema) = f.input_schema.as_object() else {
        return Err(ApiError::invalid(
            "input_schema must be a JSON Schema object",
        ));
    };
    if schema.get("type").is_some_and(|t| t != "object") {
        return Err(ApiError::invalid("input_schema.type must be \"object\""));
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for param in path_params(&f.path) {
        // a key cleaned for models keeps the placeholder as its wire name
        let declared = props.is_some_and(|p| {
            p.contains_key(param)
                || p.values()
                    .any(|v| v["x-loopgate-in"] == "path" && v["x-loopgate-name"] == param)
        });
        if !declared {
            return Err(ApiError::invalid(format!(
                "path parameter {{{param}}} must be declared in input_schema.properties"
            )));
        }
    }
    // P12: a pagination hint must name parameters there are (by argument or API name)
    if let Some(problem) = loopgate_engine::analysis::hint_problem(&f.input_schema).filter(|_| hint)
    {
        return Err(ApiError::invalid(format!("input_schema: {problem}")));
    }
    if f.description.len() > 4096 {
        return Err(ApiError::invalid("description must be at most 4096 bytes"));
    }
    Ok(f)
}

fn path_params(path: &str) -> impl Iterator<Item = &str> {
    path.split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(p, _)| p))
}

/// Define a tool by hand.
///
/// An HTTP tool: `method` and `path` on its provider's `base_url`, an `input_schema` (JSON
/// Schema) whose properties become query, path or body parameters. Most tools come from `POST
/// /v1/providers/{provider_id}/openapi` instead. Answers `201`.
#[utoipa::path(post, operation_id = "createTool", path = "/v1/tools", tag = "studio", request_body(content = ToolInput, example = json!({"provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "list_items", "description": "List items, newest first.", "method": "GET", "path": "/items", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "per_page": {"type": "integer", "maximum": 5}, "status": {"type": "string", "enum": ["open", "closed"]}}}})),
    responses((status = 409, description = "The name is taken (`conflict`): a tool of this provider already has that name", body = Problem), (status = 201, body = Tool, example = json!({"id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "list_items", "description": "List items, newest first.", "method": "GET", "path": "/items", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "status": {"enum": ["open", "closed"], "type": "string"}, "per_page": {"type": "integer", "maximum": 5}}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.677014Z", "updated_at": "2026-12-07T21:27:02.677014Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<ToolInput>,
) -> Result<HttpResponse, ApiError> {
    let b = body.into_inner();
    let provider = providers::get(&state.pool, &key.org, &b.provider_id)
        .await
        .map_err(|_| {
            ApiError::invalid(format!(
                "provider_id '{}' is not a provider of this org",
                b.provider_id
            ))
        })?;
    let fields = check(ToolFields {
        provider_id: b.provider_id,
        name: b.name,
        description: b.description,
        method: b.method,
        path: b.path,
        input_schema: b.input_schema,
        kind: b.kind.unwrap_or(provider.kind),
        // a connected-app provider's tools are in its toolkit (D2)
        toolkit: b.toolkit.or(provider.toolkit),
    })?;
    let tool = tools::create(&state.pool, &key.org, &fields).await?;
    state
        .runtime
        .embed_tools_later(&key.org, std::slice::from_ref(&tool.id));
    audit::created(
        &state,
        &key.org,
        key.actor(),
        ("tool", &tool.id),
        &tool,
        &[],
    )
    .await?;
    Ok(HttpResponse::Created().json(tool))
}

/// List tools.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listTools", path = "/v1/tools", tag = "studio", params(ListParams, ToolFilter),
    responses((status = 200, body = ListResponse<Tool>, example = json!({"data": [{"id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "list_items", "description": "List items, newest first; filter by status.", "method": "GET", "path": "/items", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "status": {"enum": ["open", "closed"], "type": "string"}, "per_page": {"type": "integer", "maximum": 5}}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.677014Z", "updated_at": "2026-12-07T21:27:02.697483Z"}, {"id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "listCustomers", "description": "List customers", "method": "GET", "path": "/customers", "input_schema": {"type": "object", "required": [], "properties": {"page": {"type": "integer", "minimum": 1, "x-loopgate-in": "query"}, "per_page": {"type": "integer", "maximum": 100, "x-loopgate-in": "query"}}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.671240Z", "updated_at": "2026-12-07T21:27:02.671240Z"}], "has_more": false, "cursor": null, "total": 2}))), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
    f: web::Query<ToolFilter>,
) -> Result<HttpResponse, ApiError> {
    let page = tools::list(&state.pool, &key.org, f.provider_id.as_deref(), &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get a tool.
///
/// The tool's definition: method, path, input schema, kind and toolkit.
#[utoipa::path(get, operation_id = "getTool", path = "/v1/tools/{tool_id}", tag = "studio",
    responses((status = 200, body = Tool, example = json!({"id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "list_items", "description": "List items, newest first.", "method": "GET", "path": "/items", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "status": {"enum": ["open", "closed"], "type": "string"}, "per_page": {"type": "integer", "maximum": 5}}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.677014Z", "updated_at": "2026-12-07T21:27:02.677014Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let t = tools::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("tool"))?;
    Ok(HttpResponse::Ok().json(t))
}

/// How a tool pages (P13), for the Studio's tool card.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolPagination {
    pub tool_id: String,
    /// The style a walk would use: `offset`, `page`, `cursor`, or `none` (no way to
    /// advance in the schema: `_all_pages` is not offered).
    #[schema(value_type = String)]
    pub style: PagingStyle,
    /// `hint` (the schema's `x-loopgate-pagination` decided) or `detected`.
    #[schema(value_type = String)]
    pub source: PagingSource,
    /// `declared` (a hint), `high`, `medium` (a cursor by name; the first response
    /// confirms it) or `low` (a name without a declared type).
    #[schema(value_type = String)]
    pub confidence: Confidence,
    /// The parameters a walk sets, by role: `{size, page, offset, cursor}`, each a
    /// parameter name (`body.<name>` for a body field) or null.
    #[schema(value_type = Object)]
    pub parameters: PagingParams,
    /// The `x-loopgate-pagination` hint as stored, when there is one; edit it with
    /// `PATCH /v1/tools/{tool_id}` (`input_schema`).
    pub hint: Option<Value>,
    /// One sentence for a person.
    pub note: String,
    /// What walks established about the tool's paging (P14, P15), used by every later
    /// walk: `pageBase` (its first page number), `sizeCap` (a page size the API caps
    /// silently), `nextAt` and `totalAt` (where the next position and the total were
    /// read), `responsePaging` (its responses link the next page: `_all_pages` is offered),
    /// and `evidence`, one sentence per fact. Null until a walk learned something; dropped
    /// when a response contradicts it.
    #[schema(value_type = Option<Object>)]
    pub learned: Option<Value>,
    /// When a walk last confirmed `learned`.
    pub learned_confirmed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// How a tool pages: the style, parameters and confidence of pagination detection (P13),
/// and what its walks learned (P14, P15).
///
/// The detected style (page number, offset, cursor, next link), the parameters used, what walks
/// have learned (page base, silent page-size cap, where next and total live, paging seen only
/// in responses) and when it was last confirmed.
#[utoipa::path(get, operation_id = "getToolPagination", path = "/v1/tools/{tool_id}/pagination", tag = "studio",
    params(("tool_id" = String, Path, description = "The tool")),
    responses((status = 200, body = ToolPagination, example = json!({"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "style": "page", "source": "detected", "confidence": "high", "parameters": {"size": "per_page", "page": "page", "offset": null, "cursor": null}, "hint": null, "note": "Walks set the page size to its maximum and advance the position; later pages may be fetched concurrently once the first response shows random access."})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn pagination(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let t = tools::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("tool"))?;
    let s = summarize(&t.input_schema.0);
    let learned = tool_paging::get(&state.pool, &key.org, &t.id).await?;
    Ok(HttpResponse::Ok().json(ToolPagination {
        tool_id: t.id,
        style: s.style,
        source: s.source,
        confidence: s.confidence,
        parameters: s.parameters,
        hint: s.hint,
        note: s.note,
        learned_confirmed_at: learned.as_ref().map(|l| l.confirmed_at),
        learned: learned.map(|l| l.learned),
    }))
}

/// Update a tool; absent fields stay as they are.
///
/// Answers `200` with the tool as it now is.
#[utoipa::path(patch, operation_id = "updateTool", path = "/v1/tools/{tool_id}", tag = "studio", request_body(content = ToolPatch, example = json!({"description": "List items, newest first; filter by status."})),
    responses((status = 200, body = Tool, example = json!({"id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "list_items", "description": "List items, newest first; filter by status.", "method": "GET", "path": "/items", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "status": {"enum": ["open", "closed"], "type": "string"}, "per_page": {"type": "integer", "maximum": 5}}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.677014Z", "updated_at": "2026-12-07T21:27:02.697483Z"})), (status = 404, body = Problem), (status = 409, description = "Another tool of the provider has that name (`conflict`)", body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<ToolPatch>,
) -> Result<HttpResponse, ApiError> {
    let cur = tools::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("tool"))?;
    let cur_shown = cur.clone();
    let b = body.into_inner();
    let schema_written = b.input_schema.is_some();
    let fields = check_fields(
        ToolFields {
            provider_id: cur.provider_id,
            name: b.name.unwrap_or(cur.name),
            description: b.description.unwrap_or(cur.description),
            method: b.method.unwrap_or(cur.method),
            path: b.path.unwrap_or(cur.path),
            input_schema: b.input_schema.unwrap_or(cur.input_schema.0),
            kind: b.kind.unwrap_or(cur.kind),
            toolkit: b.toolkit.or(cur.toolkit),
        },
        schema_written,
    )?;
    let before = cur_shown;
    let t = tools::update(&state.pool, &key.org, &before.id, &fields)
        .await
        .map_err(or_not_found("tool"))?;
    state
        .runtime
        .embed_tools_later(&key.org, std::slice::from_ref(&t.id));
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("tool", &t.id),
        &before,
        &t,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(t))
}

/// Delete a tool (and its agent bindings).
///
/// Answers `204`.
#[utoipa::path(delete, operation_id = "deleteTool", path = "/v1/tools/{tool_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = tools::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("tool"))?;
    tools::delete(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("tool"))?;
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("tool", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Import an OpenAPI 3.0/3.1 document (JSON or YAML): one tool per operation, all or nothing.
///
/// Only local `$ref`s are followed; a remote `$ref` is refused, never fetched.
/// Header parameters named Authorization, Cookie or Host are not imported. A document
/// over `openapi_import_max_bytes` (64 MiB by default) is `413 payload_too_large`.
#[utoipa::path(post, operation_id = "importOpenapiTools", path = "/v1/providers/{provider_id}/openapi", tag = "studio",
    request_body(description = "An OpenAPI 3.0 or 3.1 document, as JSON or YAML (the body is parsed as YAML, of which JSON is a subset, whatever its `Content-Type`)",
        content((Object = "application/json", example = json!({"openapi": "3.0.3", "info": {"title": "Orders API", "version": "1.0.0"}, "paths": {"/customers": {"get": {"operationId": "listCustomers", "summary": "List customers", "parameters": [{"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}}, {"name": "per_page", "in": "query", "schema": {"type": "integer", "maximum": 100}}], "responses": {"200": {"description": "A page of customers"}}}}}})), (String = "application/yaml"), (String = "text/yaml"))),
    responses((status = 409, description = "The name is taken (`conflict`): a tool of this provider already has the name of an imported operation; nothing was imported", body = Problem), (status = 201, body = ImportedTools, example = json!({"data": [{"id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "name": "listCustomers", "description": "List customers", "method": "GET", "path": "/customers", "input_schema": {"type": "object", "required": [], "properties": {"page": {"type": "integer", "minimum": 1, "x-loopgate-in": "query"}, "per_page": {"type": "integer", "maximum": 100, "x-loopgate-in": "query"}}, "x-loopgate-doc": {"summary": "List customers"}}, "kind": "api", "toolkit": null, "created_at": "2026-12-07T21:27:02.671240Z", "updated_at": "2026-12-07T21:27:02.671240Z"}], "vectors_pending": 1})), (status = 404, body = Problem), (status = 413, body = Problem, description = "The document is larger than `openapi_import_max_bytes` (`payload_too_large`); `detail` names the limit and the setting."), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn import_openapi(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: actix_web::HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let provider = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    let max = state.settings.openapi_import_max_bytes;
    // one import at a time per replica (bounded memory), a stalled one not for long
    let _turn = tokio::time::timeout(IMPORT_TURN_WAIT, state.import_turns.acquire())
        .await
        .map_err(|_| ApiError::Unavailable {
            detail:
                "another OpenAPI import is being read or parsed on this replica; try again shortly"
                    .into(),
            retry_after_secs: 5,
        })?
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("import queue closed: {e}")))?;
    // the turn is held while the body arrives: a sender that stalls or trickles loses it
    let body = tokio::time::timeout(IMPORT_READ_TIME, read_document(&req, payload, max))
        .await
        .map_err(|_| {
            ApiError::malformed(format!(
                "the document did not arrive within {} s",
                IMPORT_READ_TIME.as_secs()
            ))
        })??;
    if body.is_empty() {
        return Err(ApiError::malformed(
            "the request body must be an OpenAPI document (JSON or YAML)",
        ));
    }
    // CPU-bound on large documents: off the async executor.
    let imported = web::block(move || crate::openapi_import::import(&body))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("import task failed: {e}")))?
        .map_err(|e| ApiError::invalid(format!("the OpenAPI document was not imported: {e}")))?;
    if imported.is_empty() {
        return Err(ApiError::invalid(
            "the OpenAPI document declares no operations under `paths`",
        ));
    }
    let fields = imported
        .into_iter()
        .map(|t| {
            let name = t.name.clone();
            check(ToolFields {
                provider_id: provider.id.clone(),
                name: t.name,
                description: t.description,
                method: t.method,
                path: t.path,
                input_schema: t.input_schema,
                kind: if provider.kind == ToolKind::App {
                    ToolKind::App
                } else {
                    ToolKind::Api
                },
                toolkit: provider.toolkit.clone(),
            })
            .map_err(|e| ApiError::invalid(format!("operation '{name}': {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let data = tools::create_many(&state.pool, &key.org, &fields).await.map_err(|e| match e {
        crate::store::StoreError::Conflict(_) => ApiError::Conflict(
            "a tool with one of these names already exists for this provider; nothing was imported".into(),
        ),
        other => other.into(),
    })?;
    let created: Vec<(&str, &Tool)> = data.iter().map(|t| (t.id.as_str(), t)).collect();
    audit::created_many(&state, &key.org, key.actor(), "tool", &created).await?;
    let ids: Vec<String> = data.iter().map(|t| t.id.clone()).collect();
    state.runtime.embed_tools_later(&key.org, &ids);
    let vectors_pending = if state.runtime.semantic_unavailable().is_none() {
        ids.len()
    } else {
        0
    };
    Ok(HttpResponse::Created().json(ImportedTools {
        data,
        vectors_pending,
    }))
}

/// How long an import waits for its turn before it is told to come back (503).
const IMPORT_TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(20);
/// The whole document must arrive within this (64 MiB at ~1 MiB/s), and no gap between
/// two of its chunks may be longer than [`IMPORT_CHUNK_GAP`].
const IMPORT_READ_TIME: std::time::Duration = std::time::Duration::from_secs(60);
const IMPORT_CHUNK_GAP: std::time::Duration = std::time::Duration::from_secs(10);

/// An OpenAPI document's bytes, at most `max` (`openapi_import_max_bytes`, apart from the
/// API's `request_max_bytes`): a longer one is refused as soon as it is known to be,
/// from its `Content-Length` or while it is read, never buffered whole.
async fn read_document(
    req: &actix_web::HttpRequest,
    mut payload: web::Payload,
    max: usize,
) -> Result<web::Bytes, ApiError> {
    use futures_util::StreamExt;
    let too_large = || ApiError::too_large(max, "openapi_import_max_bytes");
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut buf = web::BytesMut::with_capacity(declared.unwrap_or(0).min(max));
    let stalled = || {
        ApiError::malformed(format!(
            "the body stalled: nothing arrived for {} s",
            IMPORT_CHUNK_GAP.as_secs()
        ))
    };
    while let Some(chunk) = tokio::time::timeout(IMPORT_CHUNK_GAP, payload.next())
        .await
        .map_err(|_| stalled())?
    {
        let chunk =
            chunk.map_err(|e| ApiError::malformed(format!("the body could not be read: {e}")))?;
        if buf.len() + chunk.len() > max {
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}
