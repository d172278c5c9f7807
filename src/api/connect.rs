//! The connect page end users open from a `connect_toolkit` link (D4):
//! plain HTML with no external assets and no JavaScript, a form for an API key or a
//! button that starts the OAuth sign-in, and the OAuth callback. The link token in the
//! path is the credential. Errors are HTML for browsers and problem+json otherwise.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use secrecy::SecretString;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::error::{ApiError, Problem};
use crate::api::state::AppState;
use crate::call::connect_page::{ConnectError, Form, Submitted};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn page(status: actix_web::http::StatusCode, title: &str, body: &str) -> HttpResponse {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}\
         input{{width:100%;padding:.5rem;margin:.5rem 0 1rem;box-sizing:border-box}}button{{padding:.6rem 1.2rem}}</style>\
         </head><body><h1>{t}</h1>{body}</body></html>",
        t = esc(title)
    );
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ))
        .body(html)
}

fn wants_html(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

fn failed(req: &HttpRequest, e: ConnectError) -> Result<HttpResponse, ApiError> {
    let api = match &e {
        ConnectError::LinkInvalid => ApiError::NotFound(e.to_string()),
        ConnectError::Invalid(_) | ConnectError::Refused(_) => ApiError::invalid(e.to_string()),
        ConnectError::Store(_) | ConnectError::Internal(_) => {
            ApiError::Internal(anyhow::anyhow!("connect page: {e:#}"))
        }
    };
    if !wants_html(req) {
        return Err(api);
    }
    let status = actix_web::ResponseError::status_code(&api);
    let detail = api.problem().detail;
    Ok(page(
        status,
        "Could not connect",
        &format!("<p>{}</p>", esc(&detail)),
    ))
}

fn connected(toolkit: &str) -> HttpResponse {
    page(
        actix_web::http::StatusCode::OK,
        &format!("{toolkit} is connected"),
        "<p>You can close this page and tell the assistant you are done.</p>",
    )
}

/// The connect page of a single-use link (HTML).
///
/// Public: the link is the credential, valid once and until it expires. Shows the toolkit's
/// form (an API key field) or a button that starts the OAuth sign-in; a link that is unknown,
/// used or expired answers `404`.
#[utoipa::path(get, operation_id = "getConnectPage", path = "/connect/{link}", tag = "connect",
    params(("link" = String, Path, description = "The link token from `connect_toolkit`")),
    responses((status = 200, description = "The page: an API-key form or a button that starts the sign-in", content_type = "text/html", body = String),
              (status = 404, body = Problem)))]
pub async fn show(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let p = match state.runtime.connect_page(&path).await {
        Ok(p) => p,
        Err(e) => return failed(&req, e),
    };
    let action = format!("/connect/{}", esc(&path));
    let kit = esc(&p.toolkit);
    let body = match p.form {
        Form::OAuth => format!(
            "<p>An assistant asks to use <strong>{kit}</strong> on your behalf. You will sign in there.</p>\
             <form method=\"post\" action=\"{action}\"><button type=\"submit\">Continue to sign in</button></form>"
        ),
        Form::ApiKey { instructions } => format!(
            "<p>An assistant asks to use <strong>{kit}</strong> on your behalf with your API key.</p>{}\
             <form method=\"post\" action=\"{action}\"><label for=\"api_key\">API key</label>\
             <input id=\"api_key\" name=\"api_key\" type=\"password\" autocomplete=\"off\" required>\
             <button type=\"submit\">Connect</button></form>",
            instructions.map(|i| format!("<p>{}</p>", esc(&i))).unwrap_or_default()
        ),
    };
    Ok(page(
        actix_web::http::StatusCode::OK,
        &format!("Connect {}", p.toolkit),
        &body,
    ))
}

/// The connect page's form.
#[derive(Deserialize, ToSchema)]
pub struct ConnectForm {
    /// The API key, for toolkits connected with one.
    #[schema(value_type = Option<String>)]
    pub api_key: Option<SecretString>,
}

/// Submit the connect page: stores an API key, or redirects to the OAuth sign-in.
///
/// Public, form-encoded (`application/x-www-form-urlencoded`). An API-key toolkit stores the
/// key and answers an HTML confirmation (`200`); an OAuth toolkit answers `303` to the
/// authorization server. The link is spent either way.
#[utoipa::path(post, operation_id = "submitConnectPage", path = "/connect/{link}", tag = "connect",
    params(("link" = String, Path, description = "The link token from `connect_toolkit`")),
    request_body(content = ConnectForm, content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, description = "Connected (HTML)", content_type = "text/html", body = String),
              (status = 303, description = "To the authorization server's sign-in (OAuth 2.0 with PKCE)"),
              (status = 400, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn submit(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    form: web::Form<ConnectForm>,
) -> Result<HttpResponse, ApiError> {
    match state
        .runtime
        .connect_submit(&path, form.into_inner().api_key)
        .await
    {
        Ok(Submitted::Redirect(url)) => Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, url))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header(("Referrer-Policy", "no-referrer"))
            .finish()),
        Ok(Submitted::Connected(toolkit)) => Ok(connected(&toolkit)),
        Err(e) => failed(&req, e),
    }
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CallbackParams {
    pub state: Option<String>,
    pub code: Option<String>,
    pub error: Option<String>,
    /// The issuer of the answer (RFC 9207): checked against the provider's.
    pub iss: Option<String>,
}

/// Where the authorization server sends the user back (OAuth 2.0 redirect URI).
///
/// Public: the `state` parameter is the credential. On success the user's connection is stored
/// and an HTML page says so; a state that is unknown, used or expired answers `404`.
#[utoipa::path(get, operation_id = "connectCallback", path = "/connect/callback", tag = "connect",
    params(CallbackParams),
    responses((status = 200, description = "Connected (HTML)", content_type = "text/html", body = String),
              (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn callback(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<CallbackParams>,
) -> Result<HttpResponse, ApiError> {
    let Some(s) = q
        .state
        .as_deref()
        .filter(|s| !s.is_empty() && s.len() <= 500)
    else {
        return failed(&req, ConnectError::LinkInvalid);
    };
    match state
        .runtime
        .connect_callback(s, q.code.as_deref(), q.error.as_deref(), q.iss.as_deref())
        .await
    {
        Ok(toolkit) => Ok(connected(&toolkit)),
        Err(e) => failed(&req, e),
    }
}
