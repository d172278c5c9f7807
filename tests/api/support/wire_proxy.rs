//! A TCP proxy between the app and one of the test services (Postgres, Redis), for tests
//! that count what the app sends on the wire (`sql_count`, `redis_count`): it listens on
//! port 0, connects each accepted client to the service, copies the service's replies back
//! as they are, and hands the client's side to a [`Relay`] that reads, counts and forwards.

use std::future::Future;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// What a counting proxy does with one connection.
pub trait Relay: Clone + Send + Sync + 'static {
    /// Reads what the client sends and forwards it to the service, until either closes.
    fn client(
        &self,
        from_client: OwnedReadHalf,
        to_server: OwnedWriteHalf,
    ) -> impl Future<Output = ()> + Send + 'static;

    /// `bytes` of the service's reply are about to be copied back to the client (counted
    /// before the client can act on them).
    fn replied(&self, _bytes: u64) {}

    /// The relay of one new connection: a copy holding that connection's own state, if
    /// it keeps any.
    fn connection(&self) -> Self {
        self.clone()
    }
}

/// A proxy in front of the service at `service_url` (its port, or `default_port`): the URL
/// to give the app instead, the same but for the proxy's port.
pub async fn start(service_url: &str, default_port: u16, relay: impl Relay) -> url::Url {
    let mut url = url::Url::parse(service_url).expect("service url");
    let target = format!(
        "{}:{}",
        url.host_str().expect("host"),
        url.port().unwrap_or(default_port)
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    url.set_port(Some(port)).expect("port");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&target).await else {
                continue;
            };
            tokio::spawn(connection(client, server, relay.connection()));
        }
    });
    url
}

async fn connection(client: TcpStream, server: TcpStream, relay: impl Relay) {
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (from_client, mut to_client) = client.into_split();
    let (mut from_server, to_server) = server.into_split();
    let back = relay.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from_server.read(&mut buf).await {
            if n == 0 {
                break;
            }
            back.replied(n as u64);
            if to_client.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    relay.client(from_client, to_server).await;
}
