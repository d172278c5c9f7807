//! Counts what the app asks of Redis: a small proxy between the app and the test Redis that
//! reads the commands on the wire (RESP arrays of bulk strings, pipelined or not) and counts
//! the bytes each way and the round trips, so a test sees one app's Redis traffic alone,
//! whatever else runs.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::support::wire_proxy::{self, Relay};

#[derive(Default)]
struct Seen {
    /// Each command, the round trip it was sent in, and for a script (`EVAL`) which
    /// one ([`script_of`]).
    commands: Mutex<Vec<(String, u64, &'static str)>>,
    sent: AtomicU64,
    received: AtomicU64,
    round_trips: AtomicU64,
}

pub struct RedisCounter {
    /// The Redis URL to give the app (through the proxy).
    pub url: String,
    seen: Arc<Seen>,
}

/// What the app did between two [`RedisCounter::snapshot`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traffic {
    /// Command names, in order.
    pub commands: Vec<String>,
    /// Bytes the app sent to Redis.
    pub sent: u64,
    /// Bytes Redis sent back.
    pub received: u64,
    /// Times the app sent on a connection after Redis had answered there (or first): for
    /// one call's commands, which each wait for the one before, its round trips (a
    /// pipeline is one).
    pub round_trips: u64,
    /// The round trip (numbered across connections) each of `commands` was sent in.
    pub trips: Vec<u64>,
    /// For each of `commands` that runs a script, which one ([`script_of`]); else "".
    pub scripts: Vec<&'static str>,
}

impl Traffic {
    /// How many round trips carried a command other than `except` (a background command,
    /// such as a rate lease's `EVAL`, takes its own or shares one with the call's).
    pub fn trips_without(&self, except: &str) -> usize {
        let mut trips: Vec<u64> = (self.commands.iter().zip(&self.trips))
            .filter(|(c, _)| *c != except)
            .map(|(_, t)| *t)
            .collect();
        trips.sort_unstable();
        trips.dedup();
        trips.len()
    }

    /// How many round trips carried a command that is not a run of script `script`
    /// ([`script_of`]).
    pub fn trips_besides_script(&self, script: &str) -> usize {
        let mut trips: Vec<u64> = (self.trips.iter().zip(&self.scripts))
            .filter(|(_, s)| **s != script)
            .map(|(t, _)| *t)
            .collect();
        trips.sort_unstable();
        trips.dedup();
        trips.len()
    }

    /// The round trip `command` (its first) was sent in.
    pub fn trip_of(&self, command: &str) -> Option<u64> {
        let i = self.commands.iter().position(|c| c == command)?;
        Some(self.trips[i])
    }
}

impl RedisCounter {
    pub fn snapshot(&self) -> Traffic {
        let seen = self.seen.commands.lock().unwrap();
        let commands = seen.iter().map(|c| c.0.clone()).collect();
        let trips = seen.iter().map(|c| c.1).collect();
        let scripts = seen.iter().map(|c| c.2).collect();
        Traffic {
            commands,
            trips,
            scripts,
            sent: self.seen.sent.load(Ordering::SeqCst),
            received: self.seen.received.load(Ordering::SeqCst),
            round_trips: self.seen.round_trips.load(Ordering::SeqCst),
        }
    }

    /// What happened since `before`.
    pub fn since(&self, before: &Traffic) -> Traffic {
        let now = self.snapshot();
        Traffic {
            commands: now.commands[before.commands.len()..].to_vec(),
            trips: now.trips[before.trips.len()..].to_vec(),
            scripts: now.scripts[before.scripts.len()..].to_vec(),
            sent: now.sent - before.sent,
            received: now.received - before.received,
            round_trips: now.round_trips - before.round_trips,
        }
    }
}

/// A proxy in front of the Redis at `REDIS_URL`.
pub async fn start() -> RedisCounter {
    let redis = std::env::var("REDIS_URL").expect("this test needs the Redis scripts/test starts");
    let seen = Arc::new(Seen::default());
    let relay = Commands {
        seen: seen.clone(),
        answered: Arc::default(),
    };
    let url = wire_proxy::start(&redis, 6379, relay).await;
    RedisCounter {
        url: url.to_string(),
        seen,
    }
}

#[derive(Clone)]
struct Commands {
    seen: Arc<Seen>,
    /// This connection's replies since the app last sent on it.
    answered: Arc<AtomicBool>,
}

impl Relay for Commands {
    fn connection(&self) -> Self {
        Commands {
            seen: self.seen.clone(),
            answered: Arc::new(AtomicBool::new(true)),
        }
    }

    fn client(
        &self,
        mut from_client: OwnedReadHalf,
        mut to_server: OwnedWriteHalf,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (seen, answered) = (self.seen.clone(), self.answered.clone());
        async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut pending = Vec::new();
            let mut trip = 0;
            while let Ok(n) = from_client.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                seen.sent.fetch_add(n as u64, Ordering::SeqCst);
                if answered.swap(false, Ordering::SeqCst) {
                    trip = seen.round_trips.fetch_add(1, Ordering::SeqCst) + 1;
                }
                pending.extend_from_slice(&buf[..n]);
                while let Some((name, used)) = command(&pending) {
                    let script = script_of(&name, &pending[..used]);
                    seen.commands.lock().unwrap().push((name, trip, script));
                    pending.drain(..used);
                }
                if to_server.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }

    fn replied(&self, bytes: u64) {
        self.seen.received.fetch_add(bytes, Ordering::SeqCst);
        self.answered.store(true, Ordering::SeqCst);
    }
}

/// Which of loopgate's scripts a command runs: `"rate"` (a rate lease's GCRA,
/// `quota::scripts::GCRA`), `"slot"` (a walk slot, `quota::scripts::SLOT`), `"script"`
/// (another), or `""` for a command that runs none.
fn script_of(name: &str, command: &[u8]) -> &'static str {
    if name != "EVAL" && name != "EVALSHA" {
        return "";
    }
    let has = |needle: &[u8]| command.windows(needle.len()).any(|w| w == needle);
    if has(b"ZREMRANGEBYSCORE") {
        "slot"
    } else if has(b"tat") || has(b"TAT") {
        "rate"
    } else {
        "script"
    }
}

/// The first complete command in `buf`: its name and its length in bytes.
fn command(buf: &[u8]) -> Option<(String, usize)> {
    fn line(buf: &[u8], at: usize) -> Option<(usize, usize)> {
        let end = at + buf.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(&buf[at + 1..end]).ok()?.parse().ok()?;
        Some((n, end + 2))
    }
    if buf.first() != Some(&b'*') {
        return None;
    }
    let (args, mut at) = line(buf, 0)?;
    let mut name = String::new();
    for i in 0..args {
        let (len, start) = line(buf, at)?;
        let end = start + len;
        if buf.len() < end + 2 {
            return None;
        }
        if i == 0 {
            name = String::from_utf8_lossy(&buf[start..end]).to_ascii_uppercase();
        }
        at = end + 2;
    }
    Some((name, at))
}

#[test]
fn commands_are_read_whole_and_pipelined() {
    let two = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$8\r\nGETRANGE\r\n$1\r\nk\r\n$1\r\n0\r\n";
    let (name, used) = command(two).unwrap();
    assert_eq!((name.as_str(), used), ("GET", 20));
    assert_eq!(command(&two[used..]).unwrap().0, "GETRANGE");
    assert_eq!(command(&two[..used - 1]), None, "not complete yet");
}
