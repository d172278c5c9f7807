//! The first five minutes, through the real binary: secrets are text whatever they look
//! like (a digits-only signing key and admin token work), and a configuration mistake is
//! one line naming the setting — no backtrace, even with `RUST_BACKTRACE=1`.

use std::process::Stdio;

use base64::Engine as _;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::support::helpers::{fresh_database, TestApp};

/// The binary with a clean environment, run from an empty folder (no `loopgate.toml`).
fn loopgate(args: &[&str], env: &[(&str, String)]) -> Command {
    let dir = std::env::temp_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loopgate"));
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_BACKTRACE", "1")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

fn credential_key() -> String {
    base64::engine::general_purpose::STANDARD.encode([7u8; 32])
}

async fn one_line_failure(env: &[(&str, String)]) -> String {
    let out = loopgate(&["serve"], env).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {stderr}"
    );
    assert!(!stderr.contains("Stack backtrace") && !stderr.contains("at src/"));
    stderr
}

#[tokio::test]
async fn a_configuration_error_is_one_line_naming_the_setting() {
    let base = [
        ("DATABASE_URL", "postgres://127.0.0.1:1/none".to_string()),
        ("LOOPGATE_ADMIN_TOKEN", "admin-token-0123456789".to_string()),
        ("LOOPGATE_CREDENTIAL_KEY", credential_key()),
    ];
    let mut short = base.to_vec();
    short.push(("LOOPGATE_TOKEN_SIGNING_KEY", "1234".into()));
    let line = one_line_failure(&short).await;
    assert!(
        line.contains("LOOPGATE_TOKEN_SIGNING_KEY") && line.contains("32"),
        "{line}"
    );

    let missing = one_line_failure(&base).await;
    assert!(missing.contains("LOOPGATE_TOKEN_SIGNING_KEY"), "{missing}");

    let mut bad_number = short.clone();
    bad_number[3].1 = "k".repeat(40);
    bad_number.push(("LOOPGATE_ORG_REQUESTS_PER_SECOND", "lots".into()));
    let line = one_line_failure(&bad_number).await;
    assert!(line.contains("LOOPGATE_ORG_REQUESTS_PER_SECOND"), "{line}");
}

#[tokio::test]
async fn digits_only_secrets_start_the_service() {
    let admin = "1234567890123456789";
    let env = [
        ("DATABASE_URL", fresh_database().await),
        ("LOOPGATE_ADMIN_TOKEN", admin.to_string()),
        ("LOOPGATE_CREDENTIAL_KEY", credential_key()),
        ("LOOPGATE_TOKEN_SIGNING_KEY", "0".repeat(40)),
        ("LOOPGATE_BIND", "127.0.0.1:0".to_string()),
        ("RUST_LOG", "info".to_string()),
        ("NO_COLOR", "1".to_string()),
    ];
    let mut child = loopgate(&["serve"], &env).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut port = None;
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(p) = line.split("port=").nth(1) {
            port = p
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .map(str::to_string);
            break;
        }
    }
    let port = port.expect("the service logged its port");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let app = TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client: reqwest::Client::new(),
        database_url: String::new(),
        records: None,
    };
    let org = app.post("/v1/orgs", admin, json!({"name": "digits"})).await;
    let org = org.ok(201)["id"].as_str().unwrap().to_string();
    let key = app
        .post(
            &format!("/v1/orgs/{org}/api-keys"),
            admin,
            json!({"name": "k", "scopes": ["mint", "runtime"]}),
        )
        .await;
    let key = key.ok(201)["key"].as_str().unwrap().to_string();
    let minted = app
        .post("/v1/runtime-tokens", &key, json!({"user_id": "u-1"}))
        .await;
    let token = minted.ok(201)["token"].as_str().unwrap().to_string();
    // the token signed with the digits-only key verifies: past auth, the call is a 404
    let r = app
        .call(Method::GET, "/v1/tool-calls/call_nope", Some(&token), None)
        .await;
    r.problem(404, "not_found");
    child.kill().await.unwrap();
}
