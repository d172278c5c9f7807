//! Group commit of tool-call records: this replica's one writer. Every write of a call's
//! record (a streamed call's `running` row and its end, a call written once when it is
//! over) is queued here; the writer puts the writes queued meanwhile into one statement
//! (`store::tool_calls::write_all`) and answers each waiter once its batch committed, so a
//! caller still gets its answer only after its record is in Postgres.
//!
//! - No timer: a lone write goes at once; while a batch is in flight the next one forms
//!   from what queues up meanwhile.
//! - Bounds: a batch holds at most [`MAX_ROWS`] writes and [`MAX_BYTES`] of arguments and
//!   outcomes (a larger single write goes alone); the queue holds at most [`QUEUE`] writes
//!   (a writer waits for room), and in practice no more than the calls in flight, since
//!   each call waits for its own write. Every write is in Postgres before its caller
//!   learns it succeeded.
//! - A record that references a stored body (a cache hit's text, `tool_calls::Filled`)
//!   carries the body too unless this writer wrote it less than [`BODY_REWRITE`] ago (the
//!   one thing remembered across batches: at most [`BODIES_KNOWN`] bodies, least recently
//!   used forgotten first, and only once their statement committed). Writing it upserts
//!   the row and refreshes its `created_at`, so a body a record references without writing
//!   it is younger than [`BODY_REWRITE`] by Postgres' clock — what lets retention delete
//!   unreferenced old bodies without racing this writer (`store::retention`). Nothing else
//!   is remembered, and a body is the same text on every replica (its id is its digest),
//!   so nothing can be stale across replicas.
//! - A waiter's error is its own batch's: a batch Postgres refuses for one of its rows (a
//!   thread deleted meanwhile, a clash) is written again one write at a time, so one
//!   call's (or one org's) bad row never fails another's record; a database out of reach
//!   fails the whole batch at once.
//! - A write whose caller went away is still written. [`Records::flush`] waits until
//!   everything queued before it is written (shutdown, after the drain).
//! - The writer has connections of its own ([`Records::connect`], at most
//!   [`WRITER_CONNECTIONS`]) on which Postgres plans its statement once, generically
//!   (`plan_cache_mode = force_generic_plan`): the statement's shape never changes, but
//!   under the default mode Postgres kept choosing a custom plan for each batch (its
//!   arrays' lengths change the estimates), so it planned a multi-CTE statement again on
//!   every batch — measured under `scripts/bench-load`'s cache hits, Postgres' share of the
//!   machine's CPU went from ~33% to ~26% with generic plans. Other queries keep the
//!   default mode on the main pool, where a parameter's value may well change the best plan.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

use crate::results::cache_memory::Bounded;
use crate::store::tool_calls::{self, Write};
use crate::store::StoreError;
use crate::telemetry::metrics::Metrics;

/// Writes in one statement at most.
pub const MAX_ROWS: usize = 256;
/// Bytes of arguments and outcomes in one statement at most.
pub const MAX_BYTES: usize = 4 << 20;
/// Writes waiting for the writer at most.
pub const QUEUE: usize = 4096;
/// A body this writer wrote longer ago than this is written again with its next reference.
/// Retention relies on it being far below its shortest age (1 day).
pub const BODY_REWRITE: Duration = Duration::from_secs(3600);
const _: () = assert!(
    BODY_REWRITE.as_secs() < 24 * 3600,
    "below the shortest record age"
);
/// Bodies this writer remembers having written, at most.
pub const BODIES_KNOWN: usize = 4096;

/// The bodies this writer wrote, by org and id, and when it sent them.
struct Known(Bounded<Instant>);

impl Known {
    fn key(w: &Write) -> Option<String> {
        let (org, f) = w.filled()?;
        Some(format!("{org} {}", f.body.id()))
    }

    /// Sets whether `w` carries its body: unless written lately.
    fn mark(&mut self, w: &mut Write) {
        let Some(key) = Self::key(w) else { return };
        let lately = self
            .0
            .get(&key, 0)
            .is_some_and(|sent| sent.elapsed() < BODY_REWRITE);
        if let Some((_, f)) = w.filled_mut() {
            f.with_body = !lately;
        }
    }

    /// The bodies of `writes` that were carried and committed (sent at `sent`).
    fn wrote(&mut self, writes: &[Write], results: &[Result<(), StoreError>], sent: Instant) {
        for (w, r) in writes.iter().zip(results) {
            if r.is_ok() && w.filled().is_some_and(|(_, f)| f.with_body) {
                if let Some(key) = Self::key(w) {
                    self.0.put(&key, 0, sent, 1);
                }
            }
        }
    }
}

enum Job {
    Write(Box<Write>, oneshot::Sender<Result<(), StoreError>>),
    Flush(oneshot::Sender<()>),
}

/// The replica's writer of tool-call records.
#[derive(Clone)]
pub struct Records {
    tx: mpsc::Sender<Job>,
}

/// Connections the writer keeps: one statement is in flight at a time.
pub const WRITER_CONNECTIONS: u32 = 1;

impl Records {
    /// Connects the writer's own pool to `url` (its statement planned generically, see the
    /// module header) and starts the writer on it.
    pub async fn connect(url: &str, metrics: Arc<Metrics>) -> Result<Self, sqlx::Error> {
        Ok(Self::spawn(Self::pool(url).await?, metrics))
    }

    /// The writer's own pool (see the module header).
    pub async fn pool(url: &str) -> Result<PgPool, sqlx::Error> {
        use sqlx::Executor as _;
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(WRITER_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(5))
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("SET plan_cache_mode = force_generic_plan")
                        .await
                        .map(drop)
                })
            })
            .connect(url)
            .await
    }

    /// Starts the writer on `pool` (inside a Tokio runtime); `metrics` counts writes and
    /// statements (their ratio is the batch size).
    pub fn spawn(pool: PgPool, metrics: Arc<Metrics>) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(writer(pool, rx, metrics));
        Self { tx }
    }

    /// Writes `w` with whatever else is queued, and answers once it is committed.
    pub async fn write(&self, w: Write) -> Result<(), StoreError> {
        let (done, answer) = oneshot::channel();
        if self.tx.send(Job::Write(Box::new(w), done)).await.is_err() {
            return Err(StoreError::Unavailable(sqlx::Error::WorkerCrashed));
        }
        answer
            .await
            .unwrap_or(Err(StoreError::Unavailable(sqlx::Error::WorkerCrashed)))
    }

    /// Waits until every write queued before this call is written (or failed).
    pub async fn flush(&self) {
        let (done, answer) = oneshot::channel();
        if self.tx.send(Job::Flush(done)).await.is_ok() {
            let _ = answer.await;
        }
    }
}

type Waiter = oneshot::Sender<Result<(), StoreError>>;

async fn writer(pool: PgPool, mut rx: mpsc::Receiver<Job>, metrics: Arc<Metrics>) {
    // a job taken from the queue that did not fit the batch before it
    let mut next: Option<Job> = None;
    let mut known = Known(Bounded::new(BODIES_KNOWN));
    loop {
        let first = match next.take() {
            Some(job) => job,
            None => match rx.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let mut writes = Vec::new();
        let mut waiters: Vec<Waiter> = Vec::new();
        let mut flushed = Vec::new();
        let mut bytes = 0;
        let mut job = Some(first);
        while let Some(j) = job.take() {
            match j {
                Job::Flush(done) => flushed.push(done),
                Job::Write(mut w, done) => {
                    known.mark(&mut w);
                    let size = w.bytes();
                    if !writes.is_empty() && bytes + size > MAX_BYTES {
                        next = Some(Job::Write(w, done));
                        break;
                    }
                    bytes += size;
                    writes.push(*w);
                    waiters.push(done);
                }
            }
            if writes.len() < MAX_ROWS {
                job = rx.try_recv().ok();
            }
        }
        if !writes.is_empty() {
            Metrics::add(&metrics.record_writes, writes.len() as u64);
            let sent = Instant::now();
            let results = commit(&pool, &writes, &metrics).await;
            known.wrote(&writes, &results, sent);
            for (done, result) in waiters.into_iter().zip(results) {
                let _ = done.send(result);
            }
        }
        // a flush is answered once what was queued before it is written
        for done in flushed {
            let _ = done.send(());
        }
    }
}

/// Writes a batch; each write's own result.
async fn commit(pool: &PgPool, writes: &[Write], metrics: &Metrics) -> Vec<Result<(), StoreError>> {
    let n = writes.len();
    Metrics::inc(&metrics.record_statements);
    match tool_calls::write_all(pool, writes).await {
        Ok(()) => (0..n).map(|_| Ok(())).collect(),
        Err(StoreError::Unavailable(e)) => {
            tracing::warn!(error = %e, rows = n, "could not write tool-call records");
            let detail = e.to_string();
            let mut out = vec![Err(StoreError::Unavailable(e))];
            out.extend((1..n).map(|_| {
                Err(StoreError::Unavailable(sqlx::Error::Io(
                    std::io::Error::other(detail.clone()),
                )))
            }));
            out
        }
        Err(e) if n == 1 => vec![Err(e)],
        // one row spoiled the batch: each write alone, so it fails its own call only (each
        // carries its body if the batch did: the batch wrote none)
        Err(_) => {
            let mut out = Vec::with_capacity(n);
            for w in writes {
                Metrics::inc(&metrics.record_statements);
                out.push(tool_calls::write_all(pool, std::slice::from_ref(w)).await);
            }
            out
        }
    }
}
