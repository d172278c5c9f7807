//! An OAuth 2.0 authorization server and the API it guards, started in the test: the
//! authorization code flow checks the PKCE verifier (S256) and the client's secret,
//! refresh tokens rotate and can be revoked, and the API echoes the bearer it saw. It
//! serves RFC 8414 metadata (`issuer` = its base unless told otherwise), can answer
//! refreshes with a chosen OAuth error, add `iss` to its answers, refuse chosen bearers
//! with 401, and records RFC 7009 revocations.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine as _;
use serde_json::json;
use sha2::{Digest, Sha256};

pub const CLIENT_ID: &str = "client-1";
pub const CLIENT_SECRET: &str = "secret-1";

#[derive(Default)]
pub struct AuthState {
    /// code → (PKCE challenge, redirect_uri)
    codes: HashMap<String, (String, String)>,
    pub valid_refresh: Vec<String>,
    pub revoked: bool,
    pub issued: u32,
    pub refreshes: u32,
    pub pkce_checked: u32,
    pub api_auth: Vec<String>,
    /// Put after `at-` / `rt-` in every token issued (default none: `at-1`, `rt-1`).
    pub token_prefix: String,
    /// `expires_in` of every token issued (default 0: due for a refresh at once).
    pub expires_in: u32,
    /// Refresh grants answer this status and OAuth `error` code instead.
    pub refresh_error: Option<(u16, &'static str)>,
    /// Added as `iss` to the authorization answer.
    pub iss: Option<String>,
    /// The metadata's `issuer` (default: the server's base).
    pub metadata_issuer: Option<String>,
    /// Bearer values the API answers 401.
    pub api_refuse: Vec<String>,
    /// Tokens revoked at `/revoke` (`token_type_hint:token`).
    pub revoked_tokens: Vec<String>,
    /// Metadata fetches.
    pub metadata_reads: u32,
    pub base: String,
}

pub struct AuthServer {
    pub base: String,
    pub state: Arc<Mutex<AuthState>>,
    /// Refresh requests wait for a read lock: the test holds the write lock to keep
    /// them waiting at the token endpoint.
    pub hold: Hold,
}

/// A gate in front of refresh grants, and how many have arrived at it.
#[derive(Clone, Default)]
pub struct Hold {
    pub gate: Arc<tokio::sync::RwLock<()>>,
    pub arrived: Arc<AtomicU32>,
}

impl Hold {
    pub fn arrived(&self) -> u32 {
        self.arrived.load(Ordering::SeqCst)
    }
}

type S = web::Data<Arc<Mutex<AuthState>>>;

async fn authorize(s: S, q: web::Query<HashMap<String, String>>) -> HttpResponse {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    if get("response_type") != "code"
        || get("client_id") != CLIENT_ID
        || get("code_challenge_method") != "S256"
    {
        return HttpResponse::BadRequest().body("bad authorization request");
    }
    let mut st = s.lock().unwrap();
    let code = format!("code-{}", st.codes.len() + 1);
    st.codes
        .insert(code.clone(), (get("code_challenge"), get("redirect_uri")));
    let mut to = url::Url::parse(&get("redirect_uri")).unwrap();
    to.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &get("state"));
    if let Some(iss) = &st.iss {
        to.query_pairs_mut().append_pair("iss", iss);
    }
    HttpResponse::Found()
        .insert_header(("location", to.to_string()))
        .finish()
}

fn issue(st: &mut AuthState) -> HttpResponse {
    st.issued += 1;
    let refresh = format!("rt-{}{}", st.token_prefix, st.issued);
    st.valid_refresh = vec![refresh.clone()];
    HttpResponse::Ok().json(
        json!({"access_token": format!("at-{}{}", st.token_prefix, st.issued), "token_type": "bearer",
        "expires_in": st.expires_in, "refresh_token": refresh}),
    )
}

fn grant_error() -> HttpResponse {
    HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}))
}

async fn token(
    s: S,
    hold: web::Data<Hold>,
    req: HttpRequest,
    form: web::Form<HashMap<String, String>>,
) -> HttpResponse {
    if form.get("grant_type").map(String::as_str) == Some("refresh_token") {
        hold.arrived.fetch_add(1, Ordering::SeqCst);
        drop(hold.gate.read().await);
    }
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != basic {
        return HttpResponse::Unauthorized().json(json!({"error": "invalid_client"}));
    }
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let mut st = s.lock().unwrap();
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some((challenge, redirect)) = st.codes.remove(&get("code")) else {
                return grant_error();
            };
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(get("code_verifier").as_bytes()));
            if computed != challenge || redirect != get("redirect_uri") {
                return grant_error();
            }
            st.pkce_checked += 1;
            issue(&mut st)
        }
        "refresh_token" => {
            if let Some((status, code)) = st.refresh_error {
                return HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                    .json(json!({"error": code}));
            }
            if st.revoked || !st.valid_refresh.contains(&get("refresh_token")) {
                return grant_error();
            }
            st.refreshes += 1;
            issue(&mut st)
        }
        _ => HttpResponse::BadRequest().json(json!({"error": "unsupported_grant_type"})),
    }
}

async fn messages(s: S, req: HttpRequest) -> HttpResponse {
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut st = s.lock().unwrap();
    st.api_auth.push(auth.clone());
    if st.api_refuse.contains(&auth) {
        return HttpResponse::Unauthorized()
            .insert_header(("www-authenticate", "Bearer error=\"invalid_token\""))
            .json(json!({"error": "invalid_token"}));
    }
    HttpResponse::Ok().json(json!({"data": [{"id": 1, "subject": "hello"}], "seenAuth": auth}))
}

async fn metadata(s: S) -> HttpResponse {
    let mut st = s.lock().unwrap();
    st.metadata_reads += 1;
    let b = st.base.clone();
    HttpResponse::Ok().json(json!({
        "issuer": st.metadata_issuer.clone().unwrap_or(b.clone()),
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "revocation_endpoint": format!("{b}/revoke"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "authorization_response_iss_parameter_supported": st.iss.is_some(),
        "response_types_supported": ["code"],
    }))
}

async fn revoke(s: S, form: web::Form<HashMap<String, String>>) -> HttpResponse {
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let mut st = s.lock().unwrap();
    st.revoked_tokens
        .push(format!("{}:{}", get("token_type_hint"), get("token")));
    st.valid_refresh.retain(|r| *r != get("token"));
    HttpResponse::Ok().finish()
}

pub async fn start() -> AuthServer {
    let state = Arc::new(Mutex::new(AuthState::default()));
    let data = web::Data::new(state.clone());
    let hold = Hold::default();
    let hold_data = web::Data::new(hold.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(hold_data.clone())
            .route("/authorize", web::get().to(authorize))
            .route("/token", web::post().to(token))
            .route("/me/messages", web::get().to(messages))
            .route(
                "/.well-known/oauth-authorization-server",
                web::get().to(metadata),
            )
            .route("/revoke", web::post().to(revoke))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    state.lock().unwrap().base = format!("http://127.0.0.1:{port}");
    AuthServer {
        base: format!("http://127.0.0.1:{port}"),
        state,
        hold,
    }
}
