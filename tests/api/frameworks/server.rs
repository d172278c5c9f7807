//! One server process per framework for the whole test binary: the app under
//! `tests/frameworks/<dir>/`, on a free port, over a database file it seeds with [`SETS`]:
//! `app.py` run by the pinned venv `scripts/setup-frameworks` builds
//! (`.data/frameworks-venv`), or `app.mjs` run by node over the folder's own pinned
//! `node_modules` (`npm ci`, the same script). The process keeps its standard input open
//! to us and exits when it closes (`tests/frameworks/common.py`), so it ends with the test
//! binary however that ends.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::OnceCell;

use crate::support::helpers::unused_port;
use crate::support::services;

/// The row sets every framework serves, by name: 0 rows, 1, one page, three pages, three
/// pages and one row, and one set that a single call cannot walk (more than the 20
/// pages a collection may take, P3), so it finishes through `_continue` (P10). The page
/// is 100 rows: every paginator here documents a maximum of 100, or none (P2: 100).
pub const PAGE: usize = 100;
pub const SETS: [(&str, usize); 6] = [
    ("zero", 0),
    ("one", 1),
    ("page", PAGE),
    ("pages", 3 * PAGE),
    ("pages_plus_one", 3 * PAGE + 1),
    ("large", 25 * PAGE + 7),
];

/// How long a framework may take to answer its document after starting.
const START: Duration = Duration::from_secs(60);

/// What runs a framework's app.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// `app.py` with the frameworks venv's Python.
    Python,
    /// `app.mjs` with node, over the folder's `node_modules`.
    Node,
}

/// A framework app: where it lives and where it serves its own OpenAPI document.
pub struct Framework {
    /// Folder under `tests/frameworks/`.
    pub dir: &'static str,
    /// Path of the document the framework generates.
    pub doc_path: &'static str,
    runtime: Runtime,
    cell: OnceCell<Option<Server>>,
}

impl Framework {
    pub const fn new(dir: &'static str, doc_path: &'static str) -> Framework {
        Framework::with(Runtime::Python, dir, doc_path)
    }

    /// A Node app (`app.mjs`).
    pub const fn node(dir: &'static str, doc_path: &'static str) -> Framework {
        Framework::with(Runtime::Node, dir, doc_path)
    }

    const fn with(runtime: Runtime, dir: &'static str, doc_path: &'static str) -> Framework {
        Framework {
            dir,
            doc_path,
            runtime,
            cell: OnceCell::const_new(),
        }
    }

    /// The framework's running server, started by the first test that asks; `None` (the
    /// test returns, skipped) only when the venv is missing and missing services are
    /// allowed.
    pub async fn server(&'static self) -> Option<&'static Server> {
        self.cell
            .get_or_init(|| async move { Server::start(self).await })
            .await
            .as_ref()
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python, once `scripts/setup-frameworks` has finished (its stamp written).
fn venv_python() -> Option<PathBuf> {
    let venv = root().join(".data/frameworks-venv");
    let python = venv.join("bin/python");
    (python.exists() && venv.join(".requirements-sha256").exists()).then_some(python)
}

/// The program and script that start `fw`'s app, once its setup has finished; else what
/// is missing.
fn program(fw: &Framework) -> Result<(PathBuf, PathBuf), String> {
    let dir = root().join("tests/frameworks").join(fw.dir);
    match fw.runtime {
        Runtime::Python => venv_python()
            .map(|p| (p, dir.join("app.py")))
            .ok_or_else(|| "the frameworks venv .data/frameworks-venv is missing".to_string()),
        Runtime::Node => dir
            .join("node_modules/.lock-sha256")
            .exists()
            .then(|| (PathBuf::from("node"), dir.join("app.mjs")))
            .ok_or_else(|| format!("tests/frameworks/{}/node_modules is missing", fw.dir)),
    }
}

pub struct Server {
    pub base: String,
    pub doc_path: &'static str,
    pub dir: &'static str,
    log: PathBuf,
    // held so its standard input stays open: the app exits when it closes
    _child: std::sync::Mutex<Child>,
}

impl Server {
    async fn start(fw: &'static Framework) -> Option<Server> {
        let (program, script) = match program(fw) {
            Ok(p) => p,
            Err(what) => {
                services::missing(
                    &format!(
                        "{what} (scripts/setup-frameworks installs it; scripts/test runs that)"
                    ),
                    "skipped",
                );
                return None;
            }
        };
        let port = unused_port();
        let work = std::env::temp_dir().join(format!(
            "loopgate-fw-{}-{}",
            fw.dir,
            loopgate::crypto::random_token(8).to_lowercase()
        ));
        std::fs::create_dir_all(&work).unwrap();
        let log = work.join("server.log");
        let out = std::fs::File::create(&log).unwrap();
        let sets: serde_json::Map<String, Value> = SETS
            .iter()
            .map(|(name, n)| (name.to_string(), Value::from(*n)))
            .collect();
        let child = Command::new(&program)
            .arg(&script)
            .arg("--port")
            .arg(port.to_string())
            .arg("--db")
            .arg(work.join(match fw.runtime {
                Runtime::Python => "items.sqlite3",
                Runtime::Node => "items.json",
            }))
            .arg("--sets")
            .arg(Value::Object(sets).to_string())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let server = Server {
            base: format!("http://127.0.0.1:{port}"),
            doc_path: fw.doc_path,
            dir: fw.dir,
            log,
            _child: std::sync::Mutex::new(child),
        };
        let client = reqwest::Client::new();
        let by = Instant::now() + START;
        loop {
            let up = client
                .get(format!("{}{}", server.base, server.doc_path))
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if up {
                return Some(server);
            }
            let exited = server._child.lock().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && Instant::now() < by,
                "the {} app did not serve {} within {START:?} ({}); its log:\n{}",
                fw.dir,
                fw.doc_path,
                match exited {
                    Some(s) => format!("exited: {s}"),
                    None => "still running".into(),
                },
                server.log_text()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What the app wrote so far (its errors, for a failure message).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The framework's own generated OpenAPI document, byte for byte.
    pub async fn document(&self) -> Vec<u8> {
        let res = reqwest::get(format!("{}{}", self.base, self.doc_path))
            .await
            .unwrap();
        assert!(
            res.status().is_success(),
            "{}: {}",
            self.doc_path,
            res.status()
        );
        res.bytes().await.unwrap().to_vec()
    }

    /// The query strings of every request the app received on `path`, in arrival order
    /// (the undocumented `/_requests`).
    pub async fn requests(&self, path: &str) -> Vec<String> {
        let res = reqwest::get(format!("{}/_requests", self.base))
            .await
            .unwrap();
        assert!(res.status().is_success(), "requests: {}", res.status());
        let all: Value = res.json().await.unwrap();
        all[path]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|q| q.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The set's rows read straight from the app's SQLite file, in id order (the
    /// undocumented `/_truth/{set}`, not in the document).
    pub async fn truth(&self, set: &str) -> Vec<Value> {
        let res = reqwest::get(format!("{}/_truth/{set}", self.base))
            .await
            .unwrap();
        assert!(
            res.status().is_success(),
            "truth of {set}: {}",
            res.status()
        );
        res.json().await.unwrap()
    }
}
