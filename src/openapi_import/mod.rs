//! OpenAPI import: an OpenAPI 3.0.x or 3.1.x document (JSON or YAML) to one tool
//! definition per operation. Pure: bytes in, values out; no I/O, nothing fetched.
//!
//! [`import`] is all or nothing: any problem is an [`ImportError`] whose message
//! names the place in the document (`paths./users/{id}.get.parameters[1]: $ref
//! '#/components/parameters/Missing' does not resolve`), fit for a
//! `validation_failed` detail; on error the caller stores nothing.
//!
//! # The tool
//! - `name`: the `operationId` with every run of characters outside
//!   `[A-Za-z0-9_-]` replaced by `_` (`users.user.ListUser` → `users_user_ListUser`),
//!   cut to 64; without one, `<method>_<path>` (`get_repos_owner_repo_issues`).
//!   Unique within the import: a repeat gets `_2`, `_3`, …; the runtime's own tool
//!   names (`search_tools`, `queryToolResult`, …) count as taken.
//! - `description`: the operation's summary and description (the path item's only
//!   when the operation has neither), else `METHOD path`; common HTML tags
//!   removed (Stripe writes `<p>…</p>`); `(deprecated) ` in front when deprecated;
//!   at most 1024 characters.
//! - `method`: upper case; `path`: the template exactly as in the document.
//!
//! # `input_schema` and the `x-loopgate-*` contract
//! `{"type": "object", "properties": {…}, "required": [… ]}` (`required` always
//! present, possibly empty). Each top-level property is one HTTP input, and carries:
//! - `"x-loopgate-in"`: `"path"`, `"query"`, `"header"` or `"body"`: where the value goes.
//! - `"x-loopgate-name"`: the name to use in the request, present only when it
//!   differs from the property key; otherwise the key *is* the name.
//! - `"x-loopgate-style"` / `"x-loopgate-explode"`: the parameter's OpenAPI `style`
//!   and `explode`, copied only when the document states them (OpenAPI defaults:
//!   query `form` + explode, so an array is `?a=1&a=2`; path and header `simple`,
//!   so `1,2`; `deepObject` is Stripe's `expand[]=…`/`a[b]=…`).
//! - `"x-loopgate-content-type"`: on `body`, the media type to send (JSON, or e.g.
//!   `application/x-www-form-urlencoded`, which the caller must form-encode); on a
//!   parameter declared with `content`, the media type its value is serialized as.
//!
//! Property keys: parameter names, made safe for every LLM API
//! (`[A-Za-z0-9_.-]{1,64}`: Graph's `$top` becomes `top` with `x-loopgate-name:
//! "$top"`). Order: path parameters (template order), query, header, then `body`.
//! On a clash the first keeps the key, so a path parameter wins and a query or
//! header parameter of the same name becomes `query_<name>` / `header_<name>`
//! (with `x-loopgate-name`). `body` is reserved for the request body when the
//! operation has one. Path parameters are always required; a `{placeholder}` the
//! document forgot to declare becomes a required string; a declared path parameter
//! the template lacks is dropped (it could not be sent). So every `{placeholder}`
//! of `path` is a property key, unless its name needed cleaning (then it is the
//! `x-loopgate-name` of a `"path"` property). A caller may strip the
//! `x-loopgate-*` keys before showing the schema to a model.
//!
//! Parameters: path-level and operation-level merged, operation-level winning on
//! the same name + `in` (header names case-insensitively). Dropped: cookie
//! parameters, and headers named `Authorization`, `Cookie`, `Host` (credentials
//! and routing are the provider's) and `Accept`, `Content-Type` (OpenAPI says to
//! ignore them). Each parameter's schema gets its `description`, `deprecated` and
//! `example` (as `examples`) copied in; no schema means a string.
//!
//! Request body: `application/json` or `*+json`, else the first media type with a
//! schema, else the first; under `body`, required when `requestBody.required`. A
//! body schema that accepts nothing (an empty object with
//! `additionalProperties: false`, as Stripe declares on its GETs) is left out.
//!
//! Schemas are made self-contained: see `schema.rs` for `$ref` inlining (recursive
//! schemas are cut to a stub after a bounded depth), 3.0 → 2020-12 translation and
//! read-only properties in request bodies; see `refs.rs` for what `$ref`s are
//! accepted (local only, checked across the whole document).
//!
//! Size: at most [`MAX_OPERATIONS`] operations per document, and a node budget per
//! input schema (shared out of a total for the import) beyond which `$ref`s are
//! cut to stubs, so the output stays bounded whatever the document does. The
//! work is CPU-bound (a large document can take a moment): call it off the async
//! executor.
//!
//! Paging evidence (P12): an `x-loopgate-pagination` object on the operation is copied to
//! the input schema's root as written, and what the first 2xx response's JSON schema says
//! about paging (the key of the next cursor or link, the has-more flag, the total; a
//! declared `Link` header) becomes `x-loopgate-response` there: see `responses.rs`.
//!
//! Search (D6): the operation's summary, tags and success response's top-level field
//! names become `x-loopgate-doc` there: see `search_doc.rs`.
//!
//! Not handled: `servers` (the provider's `base_url` is used), security schemes
//! (the provider's auth), responses beyond that paging evidence, callbacks, webhooks, and
//! `$ref`s relative to a schema's `$id`.

mod error;
mod json_pointer;
mod naming;
mod operation;
mod params;
mod parse;
mod refs;
mod responses;
mod schema;
mod search_doc;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod error_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod responses_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests;

use serde::Serialize;
use serde_json::Value;

pub use error::ImportError;
use error::Loc;

/// One tool made from one operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedTool {
    pub name: String,
    pub description: String,
    /// Upper case: `GET`, `POST`, …
    pub method: String,
    /// The path template, e.g. `/repos/{owner}/{repo}/issues`.
    pub path: String,
    /// A JSON Schema object; see the module documentation for its contract.
    pub input_schema: Value,
}

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// The most operations one document may carry; bigger ones are to be split (by
/// tag, say) so one request cannot tie a server up.
pub const MAX_OPERATIONS: usize = 5_000;
/// Schema nodes all input schemas of one import may take together, shared out
/// evenly between operations, each getting between `MIN_NODES_PER_TOOL` and
/// `MAX_NODES_PER_TOOL`.
const TOTAL_NODES: usize = 1_000_000;
const MIN_NODES_PER_TOOL: usize = 200;
const MAX_NODES_PER_TOOL: usize = 1_000;

/// Imports every operation of an OpenAPI 3.0/3.1 document, in document order.
pub fn import(document: &[u8]) -> Result<Vec<ImportedTool>, ImportError> {
    let doc = parse::parse(document)?;
    parse::version(&doc)?;
    refs::check_all(&doc)?;

    let paths_loc = Loc::ROOT.key("paths");
    let paths = match doc.get("paths") {
        Some(Value::Object(paths)) => paths,
        Some(_) => {
            return Err(ImportError::invalid(
                &paths_loc,
                "`paths` must be a mapping",
            ))
        }
        None => {
            return Err(ImportError::invalid(
                &Loc::ROOT,
                "the document has no `paths`",
            ))
        }
    };
    let operations = count_operations(&doc, paths);
    if operations > MAX_OPERATIONS {
        return Err(ImportError::invalid(
            &paths_loc,
            format!("the document has {operations} operations; at most {MAX_OPERATIONS} can be imported at once, so split it (by tag, for example)"),
        ));
    }
    let budget = (TOTAL_NODES / operations.max(1)).clamp(MIN_NODES_PER_TOOL, MAX_NODES_PER_TOOL);
    let mut names = naming::UniqueNames::for_tools();
    let mut tools = Vec::new();
    for (path, item) in paths {
        if path.starts_with("x-") {
            continue;
        }
        let item_loc = paths_loc.key(path);
        if !path.starts_with('/') {
            return Err(ImportError::invalid(
                &item_loc,
                "a path must start with '/'",
            ));
        }
        // A path item may itself be a `$ref` (3.1 `components/pathItems`).
        let (item, _) = refs::follow(&doc, item, &item_loc)?;
        let Value::Object(item) = item else {
            return Err(ImportError::invalid(
                &item_loc,
                "a path item must be a mapping",
            ));
        };
        let site_item = item;
        for (method, operation) in item {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let site = operation::Site {
                path,
                method,
                item: site_item,
                item_loc: &item_loc,
            };
            tools.push(operation::build(
                &doc, &site, operation, budget, &mut names,
            )?);
        }
    }
    if tools.is_empty() {
        return Err(ImportError::invalid(
            &paths_loc,
            "the document has no operations to import",
        ));
    }
    Ok(tools)
}

/// Operations under `paths`, counted before any work is done on them.
fn count_operations(doc: &Value, paths: &serde_json::Map<String, Value>) -> usize {
    paths
        .values()
        .map(|item| {
            let item = match refs::ref_of(item) {
                Some(reference) => refs::lookup(doc, reference).unwrap_or(item),
                None => item,
            };
            item.as_object().map_or(0, |m| {
                m.keys().filter(|k| METHODS.contains(&k.as_str())).count()
            })
        })
        .sum()
}
