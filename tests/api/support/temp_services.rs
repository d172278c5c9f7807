//! A Postgres or Redis of a test's own, from the machine's binaries on a free port, that
//! the test may stop and start again (the shared ones other tests use are never touched).
//! `start` returns `None` when the binaries are not installed; tests ask through
//! `services::require_redis_server` / `require_postgres_bins`, which fail the test then
//! unless missing services are allowed. As root, Postgres runs as the `postgres` OS
//! user, as scripts/services.sh does.

use std::path::PathBuf;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::support::helpers::unused_port;

fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

async fn accepting(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_ok()
}

pub struct TempPostgres {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
}

impl TempPostgres {
    pub async fn start() -> Option<TempPostgres> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("pg_ctl").exists())
            .max()?;
        let dir = std::env::temp_dir().join(format!(
            "loopgate-pg-{}",
            loopgate::crypto::random_token(10).to_lowercase()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .arg("postgres")
                .arg(&dir)
                .status()
                .await
                .is_ok_and(|s| s.success());
            assert!(ok, "chown postgres {}", dir.display());
        }
        let pg = TempPostgres {
            bin,
            dir,
            port: unused_port(),
        };
        let data = pg.dir.join("data");
        let init = pg
            .as_pg("initdb")
            .arg("-D")
            .arg(&data)
            .args(["--auth=trust", "--username=postgres", "--no-sync"])
            .output()
            .await
            .unwrap();
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        pg.start_again().await;
        Some(pg)
    }

    fn as_pg(&self, tool: &str) -> Command {
        let path = self.bin.join(tool);
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts (again, on the same port) and waits until it accepts connections.
    pub async fn start_again(&self) {
        // fsync off is safe here (only a machine crash loses data), but commits must reach
        // the WAL: the test stops the server as a crash would, and expects its rows back
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c full_page_writes=off",
            self.port,
            self.dir.display()
        );
        let out = self
            .as_pg("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-w", "-o", &opts, "start"])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops at once, as a crash would (`-m immediate`).
    pub async fn stop(&self) {
        let _ = self
            .as_pg("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-w", "-m", "immediate", "stop"])
            .output()
            .await;
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let path = self.bin.join("pg_ctl");
        let data = self.dir.join("data");
        let mut c = if is_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        };
        let _ = c
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub struct TempRedis {
    child: Option<Child>,
    pub port: u16,
}

impl TempRedis {
    pub async fn start() -> Option<TempRedis> {
        let found = Command::new("redis-server")
            .arg("--version")
            .output()
            .await
            .is_ok_and(|o| o.status.success());
        if !found {
            return None;
        }
        let mut r = TempRedis {
            child: None,
            port: unused_port(),
        };
        r.start_again().await;
        Some(r)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts (again, on the same port, empty) and waits until it accepts connections.
    pub async fn start_again(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        self.child = Some(child);
        for _ in 0..600 {
            if accepting(self.port).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("redis-server did not start on {}", self.port);
    }

    pub async fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill().await;
        }
    }

    /// Stops answering without losing anything (SIGSTOP): an outage like a partition or
    /// a hung server; [`TempRedis::resume`] ends it with every key still there.
    pub async fn pause(&self) {
        self.signal("-STOP").await;
    }

    pub async fn resume(&self) {
        self.signal("-CONT").await;
    }

    async fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().and_then(Child::id).expect("redis runs");
        let ok = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .await
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    }
}
