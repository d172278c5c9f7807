//! Counts the SQL statements the app sends to Postgres: a small proxy between the app and
//! the test database that reads the frontend side of the wire protocol and counts
//! `Query` (simple protocol, e.g. `BEGIN`) and `Execute` (extended protocol) messages.
//! Pool pings (a bare `Sync`) are not statements and are not counted. Each statement's
//! SQL is kept too (from the `Parse` its portal was bound to), so a test can say which
//! statements a call made. A replica's heartbeat (`replica_leases`, K1), sent on a timer
//! of its own, is not counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::support::wire_proxy::{self, Relay};

pub struct SqlCounter {
    /// The database URL to give the app (through the proxy).
    pub url: String,
    log: Log,
}

/// The SQL of every statement sent, in order.
type Log = Arc<Mutex<Vec<String>>>;

impl SqlCounter {
    pub fn statements(&self) -> u64 {
        self.log.lock().unwrap().len() as u64
    }

    /// The SQL of the statements sent since [`SqlCounter::statements`] was `from`.
    pub fn sql_since(&self, from: u64) -> Vec<String> {
        self.log.lock().unwrap()[from as usize..].to_vec()
    }
}

#[derive(Clone)]
struct Statements(Log);

impl Relay for Statements {
    fn client(
        &self,
        mut from_client: OwnedReadHalf,
        mut to_server: OwnedWriteHalf,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let log = self.0.clone();
        async move {
            let _ = frontend(&mut from_client, &mut to_server, &log).await;
        }
    }
}

/// A proxy in front of the database at `database_url`.
pub async fn start(database_url: &str) -> SqlCounter {
    let log = Log::default();
    let mut url = wire_proxy::start(database_url, 5432, Statements(log.clone())).await;
    url.query_pairs_mut().append_pair("sslmode", "disable");
    SqlCounter {
        url: url.to_string(),
        log,
    }
}

/// Forwards the client's messages, counting statements.
async fn frontend(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    log: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    // prepared statement name -> SQL, and portal name -> SQL, on this connection
    let (mut prepared, mut portals) = (HashMap::new(), HashMap::new());
    // untyped: an SSL/GSS request (answered by one byte) and then the startup message
    loop {
        let len = from.read_u32().await?;
        let mut frame = len.to_be_bytes().to_vec();
        frame.resize(len as usize, 0);
        from.read_exact(&mut frame[4..]).await?;
        to.write_all(&frame).await?;
        let code = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if code != 80877103 && code != 80877104 {
            break;
        }
    }
    loop {
        let tag = from.read_u8().await?;
        let len = from.read_u32().await?;
        let mut frame = vec![tag];
        frame.extend_from_slice(&len.to_be_bytes());
        frame.resize(len as usize + 1, 0);
        from.read_exact(&mut frame[5..]).await?;
        let body = &frame[5..];
        match tag {
            b'P' => {
                let (name, rest) = cstr(body);
                prepared.insert(name, cstr(rest).0);
            }
            b'B' => {
                let (portal, rest) = cstr(body);
                let sql = prepared.get(&cstr(rest).0).cloned().unwrap_or_default();
                portals.insert(portal, sql);
            }
            b'E' => {
                let sql = portals.get(&cstr(body).0).cloned().unwrap_or_default();
                // a replica's heartbeat (K1, every 2 s, on its own timer) is no call's cost
                if !sql.contains("replica_leases") {
                    log.lock().unwrap().push(sql);
                }
            }
            b'Q' => log.lock().unwrap().push(cstr(body).0),
            _ => {}
        }
        to.write_all(&frame).await?;
    }
}

/// A NUL-terminated string at the start of `bytes`, and what follows it.
fn cstr(bytes: &[u8]) -> (String, &[u8]) {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let rest = bytes.get(end + 1..).unwrap_or_default();
    (String::from_utf8_lossy(&bytes[..end]).into_owned(), rest)
}
