//! `GET /studio`: the Studio console, a web page for org members that does everything
//! through the public API with an org key (scope `studio`). Its files are compiled into
//! the binary (`include_bytes!`, from `studio/` at the repository root), so it works
//! offline and `cargo build` needs no Node: the page has no build step, and its one
//! library (Preact with htm, vendored as published on npm, `studio/vendor/`) is checked
//! against the npm package by `scripts/studio-vendor-check`.
//!
//! Every answer carries a strict Content-Security-Policy: scripts, styles and requests
//! from this origin only, no inline script but the import map (allowed by its hash, kept
//! equal to the page by a test), no framing (`frame-ancestors 'none'`), no forms posting
//! anywhere, no referrer.

use actix_web::http::header;
use actix_web::{web, HttpResponse};

use super::error::ApiError;

/// `(path under /studio/, content type, body)` of every file the console serves.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        HTML,
        include_bytes!("../../studio/index.html"),
    ),
    ("style.css", CSS, include_bytes!("../../studio/style.css")),
    (
        "app/main.js",
        JS,
        include_bytes!("../../studio/app/main.js"),
    ),
    ("app/api.js", JS, include_bytes!("../../studio/app/api.js")),
    ("app/ui.js", JS, include_bytes!("../../studio/app/ui.js")),
    (
        "app/providers.js",
        JS,
        include_bytes!("../../studio/app/providers.js"),
    ),
    (
        "app/tools.js",
        JS,
        include_bytes!("../../studio/app/tools.js"),
    ),
    (
        "app/agents.js",
        JS,
        include_bytes!("../../studio/app/agents.js"),
    ),
    (
        "app/playground.js",
        JS,
        include_bytes!("../../studio/app/playground.js"),
    ),
    (
        "app/workflows.js",
        JS,
        include_bytes!("../../studio/app/workflows.js"),
    ),
    (
        "app/connections.js",
        JS,
        include_bytes!("../../studio/app/connections.js"),
    ),
    (
        "app/automate.js",
        JS,
        include_bytes!("../../studio/app/automate.js"),
    ),
    (
        "vendor/preact.module.js",
        JS,
        include_bytes!("../../studio/vendor/preact.module.js"),
    ),
    (
        "vendor/hooks.module.js",
        JS,
        include_bytes!("../../studio/vendor/hooks.module.js"),
    ),
    (
        "vendor/htm.module.js",
        JS,
        include_bytes!("../../studio/vendor/htm.module.js"),
    ),
];

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// The SHA-256 (base64) of the page's one inline script, its import map.
pub const IMPORT_MAP_HASH: &str = "sha256-WzkNawjxwCQVSED11hP0pL4utRa/ZYd8VjptI/mJqWc=";

/// The policy of every console answer.
pub const CSP: &str = concat!(
    "default-src 'none'; script-src 'self' 'sha256-WzkNawjxwCQVSED11hP0pL4utRa/ZYd8VjptI/mJqWc='; ",
    "style-src 'self'; img-src 'self'; connect-src 'self'; ",
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
);

fn file(path: &str) -> Option<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, ct, body)| (*ct, *body))
}

fn serve(content_type: &'static str, body: &'static [u8]) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        // the page is small and changes with the binary: always revalidated
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("Content-Security-Policy", CSP))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("Cross-Origin-Opener-Policy", "same-origin"))
        .insert_header(("Cross-Origin-Resource-Policy", "same-origin"))
        .body(body)
}

/// `GET /studio` and `GET /studio/`: the page.
pub async fn index() -> HttpResponse {
    match file("index.html") {
        Some((ct, body)) => serve(ct, body),
        None => HttpResponse::NotFound().finish(),
    }
}

/// `GET /studio/{path}`: one of the console's files; anything else is `404 not_found`.
pub async fn asset(path: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let path = path.into_inner();
    if path.is_empty() {
        return Ok(index().await);
    }
    match file(&path) {
        Some((ct, body)) => Ok(serve(ct, body)),
        None => Err(ApiError::NotFound(format!(
            "the Studio console has no file '{path}'"
        ))),
    }
}

/// Registers `/studio` and `/studio/{path}` (GET only).
pub fn register(cfg: &mut web::ServiceConfig) {
    cfg.route("/studio", web::get().to(index))
        .route("/studio/{path:.*}", web::get().to(asset));
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use sha2::{Digest, Sha256};

    fn text(path: &str) -> &'static str {
        let (_, body) = file(path).unwrap_or_else(|| panic!("{path} is not served"));
        std::str::from_utf8(body).expect("utf-8")
    }

    /// The CSP names the import map by its hash: a change to the map without the hash
    /// would leave the page without its modules.
    #[test]
    fn the_csp_hash_is_the_import_maps() {
        let html = text("index.html");
        let start = html
            .find("<script type=\"importmap\">")
            .expect("an import map")
            + 25;
        let end = start + html[start..].find("</script>").expect("closed");
        let digest = Sha256::digest(&html.as_bytes()[start..end]);
        let hash = format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        );
        assert_eq!(hash, IMPORT_MAP_HASH);
        assert!(CSP.contains(&format!("'{IMPORT_MAP_HASH}'")));
        // the map's other inline script is none: every other script has a src
        assert_eq!(html.matches("<script").count(), 2);
        assert!(html.contains("<script type=\"module\" src=\"/studio/app/main.js\">"));
    }

    #[test]
    fn the_csp_is_strict() {
        for part in [
            "default-src 'none'",
            "frame-ancestors 'none'",
            "connect-src 'self'",
            "style-src 'self'",
        ] {
            assert!(CSP.contains(part), "{part}");
        }
        assert!(!CSP.contains("unsafe"), "no unsafe-inline or unsafe-eval");
        assert!(!CSP.contains("http"), "no other origin");
    }

    /// Every module the page imports is served (a file added to `studio/` but not here
    /// would break the page).
    #[test]
    fn every_imported_module_is_served() {
        for (path, ct, _) in FILES.iter().filter(|(_, ct, _)| *ct == JS) {
            let src = text(path);
            for spec in src
                .split("from '")
                .skip(1)
                .map(|s| &s[..s.find('\'').unwrap_or(0)])
            {
                if let Some(rel) = spec.strip_prefix("./") {
                    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                    let target = format!("{dir}/{rel}");
                    assert!(file(&target).is_some(), "{path} imports {spec}, not served");
                } else {
                    assert!(
                        ["preact", "preact/hooks", "htm"].contains(&spec),
                        "{path} imports {spec}: not in the import map"
                    );
                }
            }
            assert_eq!(*ct, JS);
        }
        let on_disk = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/studio/app"))
            .expect("studio/app")
            .count();
        let served = FILES
            .iter()
            .filter(|(p, _, _)| p.starts_with("app/"))
            .count();
        assert_eq!(on_disk, served, "every file of studio/app is served");
    }
}
