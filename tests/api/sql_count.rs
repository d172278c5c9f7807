//! Counts the SQL statements the app sends to Postgres: a small proxy between the app and
//! the test database that reads the frontend side of the wire protocol and counts
//! `Query` (simple protocol, e.g. `BEGIN`) and `Execute` (extended protocol) messages.
//! Pool pings (a bare `Sync`) are not statements and are not counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct SqlCounter {
    /// The database URL to give the app (through the proxy).
    pub url: String,
    count: Arc<AtomicU64>,
}

impl SqlCounter {
    pub fn statements(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

/// A proxy in front of the database at `database_url`.
pub async fn start(database_url: &str) -> SqlCounter {
    let mut url = url::Url::parse(database_url).expect("database url");
    let target = format!(
        "{}:{}",
        url.host_str().expect("host"),
        url.port().unwrap_or(5432)
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    url.set_port(Some(port)).expect("port");
    url.query_pairs_mut().append_pair("sslmode", "disable");
    let count = Arc::new(AtomicU64::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&target).await else {
                continue;
            };
            tokio::spawn(relay(client, server, counter.clone()));
        }
    });
    SqlCounter {
        url: url.to_string(),
        count,
    }
}

async fn relay(client: TcpStream, server: TcpStream, count: Arc<AtomicU64>) {
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
    });
    let _ = frontend(&mut from_client, &mut to_server, &count).await;
}

/// Forwards the client's messages, counting statements.
async fn frontend(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    count: &AtomicU64,
) -> std::io::Result<()> {
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
        if tag == b'Q' || tag == b'E' {
            count.fetch_add(1, Ordering::SeqCst);
        }
        to.write_all(&frame).await?;
    }
}
