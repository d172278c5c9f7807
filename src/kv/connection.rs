//! The Redis connection of the process, and one more per HTTP worker thread.
//!
//! A Redis connection's reader and writer run as a task of the runtime that first used it.
//! With one connection for the whole process, that task ran on the main runtime while
//! the calls that used it ran on actix's worker threads: every round trip crossed threads
//! twice (the command handed to the connection's task, its reply handed back), each a
//! wake-up of a parked thread. Measured under `scripts/bench-load`, those hand-offs were
//! about a third of loopgate's own CPU on a cache hit (`docs/performance.md`, "Cost per
//! call"). So each HTTP worker thread that [`adopt_this_thread`] gets a connection of its
//! own, made on first use there and driven by that thread's runtime; everything else
//! (background writers, schedulers, blocking jobs) shares the process's one.
//!
//! [`Redis`] is cheap to clone and is used like any `redis` connection
//! ([`redis::aio::ConnectionLike`]): which connection carries a command is decided per
//! command, by the thread it is sent from. At most [`PER_THREAD`] connections are kept
//! per thread (one per [`Redis`] handle made by [`connect`]: a process makes one; tests make
//! many), the oldest forgotten first.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// Connections one thread keeps (a process has one [`Redis`]; a test process many).
pub const PER_THREAD: usize = 4;

#[derive(Clone)]
pub struct Redis {
    shared: ConnectionManager,
    made: Arc<Made>,
}

/// How a thread's own connection is made, and which [`Redis`] it belongs to.
struct Made {
    id: u64,
    client: redis::Client,
    config: ConnectionManagerConfig,
}

thread_local! {
    static ADOPTED: Cell<bool> = const { Cell::new(false) };
    static OWN: RefCell<Vec<(u64, ConnectionManager)>> = const { RefCell::new(Vec::new()) };
}

/// Marks the calling thread as one that serves requests on a runtime of its own (an
/// actix worker): [`Redis`] commands sent from it use a connection of the thread's own.
pub fn adopt_this_thread() {
    ADOPTED.with(|a| a.set(true));
}

/// Whether [`adopt_this_thread`] was called on this thread (the upstream HTTP client keeps
/// a copy per such thread too, `upstream::caller`).
pub fn this_thread_adopted() -> bool {
    ADOPTED.with(Cell::get)
}

impl Redis {
    /// A lazy connection to `client` (nothing is connected before the first command).
    pub fn new(client: redis::Client, config: ConnectionManagerConfig) -> redis::RedisResult<Self> {
        static IDS: AtomicU64 = AtomicU64::new(0);
        Ok(Redis {
            shared: ConnectionManager::new_lazy_with_config(client.clone(), config.clone())?,
            made: Arc::new(Made {
                id: IDS.fetch_add(1, Ordering::Relaxed),
                client,
                config,
            }),
        })
    }

    /// The connection a command sent from this thread goes on.
    fn pick(&self) -> ConnectionManager {
        if !this_thread_adopted() {
            return self.shared.clone();
        }
        OWN.with(|own| {
            let mut own = own.borrow_mut();
            if let Some((_, c)) = own.iter().find(|(id, _)| *id == self.made.id) {
                return c.clone();
            }
            let made = &self.made;
            match ConnectionManager::new_lazy_with_config(made.client.clone(), made.config.clone())
            {
                Ok(c) => {
                    if own.len() >= PER_THREAD {
                        own.remove(0);
                    }
                    own.push((made.id, c.clone()));
                    c
                }
                Err(_) => self.shared.clone(),
            }
        })
    }
}

impl ConnectionLike for Redis {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let mut c = self.pick();
        Box::pin(async move { c.req_packed_command(cmd).await })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let mut c = self.pick();
        Box::pin(async move { c.req_packed_commands(pipeline, offset, count).await })
    }

    fn get_db(&self) -> i64 {
        self.shared.get_db()
    }
}
