//! A real OpenID Connect / OAuth 2.0 authorization server as a peer: npm `oidc-provider`
//! (tests/oauth-peer/server.mjs, installed by `scripts/setup-oauth-peer`) in its own Node
//! process, configured by environment (post-only client auth, access token TTL), and a
//! browser that signs in through its development login and consent forms.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::services::missing;

pub const PEER_CLIENT_ID: &str = "loopgate";
pub const PEER_CLIENT_SECRET: &str = "peer-secret-0123456789";

pub struct OAuthPeer {
    pub issuer: String,
    _child: Child,
}

fn peer_dir() -> String {
    format!("{}/tests/oauth-peer", env!("CARGO_MANIFEST_DIR"))
}

impl OAuthPeer {
    /// Starts the server for a client whose redirect URI is `redirect_uri`, with extra
    /// environment `env`; `None` only when it is not installed and that is allowed.
    pub async fn start(redirect_uri: &str, env: &[(&str, &str)]) -> Option<OAuthPeer> {
        if !std::path::Path::new(&format!("{}/node_modules/oidc-provider", peer_dir())).exists() {
            missing(
                "oidc-provider is not installed in tests/oauth-peer (run scripts/setup-oauth-peer)",
                "skipped",
            );
            return None;
        }
        let mut cmd = Command::new("node");
        cmd.current_dir(peer_dir())
            .arg("server.mjs")
            .env("OAUTH_PEER_CLIENT_ID", PEER_CLIENT_ID)
            .env("OAUTH_PEER_CLIENT_SECRET", PEER_CLIENT_SECRET)
            .env("OAUTH_PEER_REDIRECT_URI", redirect_uri)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .expect("node runs (scripts/setup-oauth-peer needs it too)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.expect("its stdout") {
                if let Some(p) = line.strip_prefix("listening ") {
                    return p.trim().parse::<u16>().expect("a port");
                }
            }
            panic!("the OAuth peer ended before listening")
        })
        .await
        .expect("the OAuth peer starts within 20 s");
        // it keeps writing (warnings): read on, or its writes fail and it ends
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(OAuthPeer {
            issuer: format!("http://127.0.0.1:{port}"),
            _child: child,
        })
    }

    /// Whether the last access token its API saw is still active at the provider, and
    /// how many distinct access tokens the API has seen.
    pub async fn last_token(&self) -> (bool, u64) {
        let v: serde_json::Value = reqwest::get(format!("{}/api/last-token", self.issuer))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(v["seen"], true, "{v}");
        (
            v["active"].as_bool().unwrap(),
            v["distinct"].as_u64().unwrap(),
        )
    }
}

/// A browser with cookies (by name; one host) that follows redirects itself.
pub struct Browser {
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

impl Default for Browser {
    fn default() -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
        }
    }
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    Some(&tag[start..start + tag[start..].find('"')?])
}

impl Browser {
    fn keep(&mut self, res: &reqwest::Response) {
        for v in res.headers().get_all("set-cookie") {
            let pair = v.to_str().unwrap().split(';').next().unwrap();
            if let Some((k, v)) = pair.split_once('=') {
                if v.is_empty() {
                    self.cookies.remove(k);
                } else {
                    self.cookies.insert(k.to_string(), v.to_string());
                }
            }
        }
    }

    fn cookie(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// From `url` (the authorization request) through the server's login and consent
    /// forms (any login), to the redirect that leaves it: that URL.
    pub async fn sign_in(&mut self, url: &str, stop_at: &str) -> String {
        let mut next = (reqwest::Method::GET, url.to_string(), None::<String>);
        for _ in 0..20 {
            let (method, to, body) = next.clone();
            if to.starts_with(stop_at) {
                return to;
            }
            let mut req = self
                .http
                .request(method, &to)
                .header("cookie", self.cookie())
                .header("accept", "text/html");
            if let Some(b) = body {
                req = req
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(b);
            }
            let res = req.send().await.unwrap();
            self.keep(&res);
            let status = res.status().as_u16();
            if (300..400).contains(&status) {
                let loc = res.headers()["location"].to_str().unwrap().to_string();
                let abs = url::Url::parse(&to)
                    .unwrap()
                    .join(&loc)
                    .unwrap()
                    .to_string();
                next = (reqwest::Method::GET, abs, None);
                continue;
            }
            let page = res.text().await.unwrap();
            assert_eq!(status, 200, "{to}: {page}");
            let form = &page[page
                .find("<form")
                .unwrap_or_else(|| panic!("a form: {page}"))..];
            let action = attr(form, "action").expect("the form's action");
            let prompt = form
                .find("name=\"prompt\"")
                .map(|i| &form[i..])
                .and_then(|t| attr(t, "value"))
                .expect("the form's prompt");
            let mut fields = url::form_urlencoded::Serializer::new(String::new());
            fields.append_pair("prompt", prompt);
            if prompt == "login" {
                fields
                    .append_pair("login", "alice")
                    .append_pair("password", "any");
            }
            let abs = url::Url::parse(&to)
                .unwrap()
                .join(action)
                .unwrap()
                .to_string();
            next = (reqwest::Method::POST, abs, Some(fields.finish()));
        }
        panic!("the sign-in did not end in 20 steps")
    }
}
