//! The official TypeScript MCP SDK running as a real peer: a `tests/mcp-peers/server-*.mjs`
//! script in its own Node process (`scripts/setup-mcp-peers` installs the SDK). It
//! prints the port it listens on; its `GET /log` answers the HTTP requests it saw.
//! [`SdkPeer::restart`] is a new process on the same port: every session is gone.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::services::missing;

pub struct SdkPeer {
    script: &'static str,
    pub port: u16,
    child: Child,
}

fn peers_dir() -> String {
    format!("{}/tests/mcp-peers", env!("CARGO_MANIFEST_DIR"))
}

/// Whether the SDK is installed; when it is not, fails the test naming the setup script
/// (or, with the services opt-out, says it is skipped).
pub fn sdk_installed() -> bool {
    installed("@modelcontextprotocol/sdk", "the TypeScript MCP SDK")
}

/// Whether the npm package `name` (pinned in tests/mcp-peers/package.json) is installed;
/// when it is not, as [`sdk_installed`].
pub fn installed(name: &str, what: &str) -> bool {
    let dir = format!("{}/node_modules/{name}", peers_dir());
    if std::path::Path::new(&dir).exists() {
        return true;
    }
    missing(
        &format!("{what} is not installed in tests/mcp-peers (run scripts/setup-mcp-peers)"),
        "skipped",
    );
    false
}

async fn spawn(script: &str, port: u16) -> (Child, u16) {
    let mut child = Command::new("node")
        .current_dir(peers_dir())
        .arg(script)
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs (scripts/setup-mcp-peers needs it too)");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(15),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the SDK peer starts within 15 s")
    .expect("the SDK peer's stdout");
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    (child, v["port"].as_u64().expect("a port") as u16)
}

impl SdkPeer {
    /// Starts `script` on a free port; `None` only when the SDK is missing and that is
    /// allowed.
    pub async fn start(script: &'static str) -> Option<SdkPeer> {
        if !sdk_installed() {
            return None;
        }
        let (child, port) = spawn(script, 0).await;
        Some(SdkPeer {
            script,
            port,
            child,
        })
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Ends the process and starts a new one on the same port (sessions gone).
    pub async fn restart(&mut self) {
        self.child.kill().await.expect("the SDK peer stops");
        let (child, port) = spawn(self.script, self.port).await;
        assert_eq!(port, self.port);
        self.child = child;
    }

    /// Every HTTP request this process saw: `{http, session, auth, method, progressToken}`.
    pub async fn log(&self) -> Vec<Value> {
        reqwest::get(format!("http://127.0.0.1:{}/log", self.port))
            .await
            .expect("the SDK peer answers")
            .json()
            .await
            .expect("its log is JSON")
    }
}

/// Runs `script` (a client of the SDK in tests/mcp-peers) with `args` to its end and
/// answers the JSON line it prints; `None` only when the SDK is missing and that is
/// allowed.
pub async fn run_client(script: &str, args: &[&str]) -> Option<Value> {
    if !sdk_installed() {
        return None;
    }
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new("node")
            .current_dir(peers_dir())
            .arg(script)
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the SDK client ends within 60 s")
    .expect("node runs (scripts/setup-mcp-peers needs it too)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{stdout:?}: {e}")))
}
