//! Group commit of tool-call records: this replica's one writer. Every write of a call's
//! record (a streamed call's `running` row and its end, a call written once when it is
//! over) is journaled ([`crate::call::record_journal`], K1) and queued here; the writer
//! puts the writes queued meanwhile into one statement (`store::tool_calls::write_all`).
//! A streamed call's writes ([`Records::write`]) are answered once their batch committed
//! (its followers rely on the record saying finished only after the log has its chunks);
//! a call written once ([`Records::write_behind`]) is answered as soon as its write is
//! journaled and queued: its record is written behind the answer, and no SQL for it is on
//! the request path.
//!
//! - A write someone waits for (a streamed call's start or end, a flush) goes at once;
//!   while a batch is in flight the next one forms from what queues up meanwhile. A batch
//!   of writes only written behind their answers takes what arrives within [`LINGER`]
//!   before its statement (a write someone waits for, arriving meanwhile, ends the wait):
//!   nobody waits for it, and fewer, fuller transactions cost Postgres less per call.
//! - Bounds: a batch holds at most [`MAX_ROWS`] writes and [`MAX_BYTES`] of arguments and
//!   outcomes (a larger single write goes alone), and never a call's end with its start
//!   (one statement cannot update the row it inserts); the queue holds at most [`QUEUE`]
//!   writes (a writer waits for room); the writes not committed are bounded by the
//!   journal ([`BACKLOG_ROWS`], [`BACKLOG_BYTES`]): a write that does not fit is refused
//!   (its call answers 503 rather than a 200 whose id would never be readable).
//! - Reading a call ([`Records::read`]): a record written behind its answer is read from
//!   this replica's memory until it committed; anything else from Postgres, where a miss
//!   is tried again after [`MISS_WAITS`] (500 ms in all) before it is a 404, since another
//!   replica may have answered the call a moment ago and be committing its record.
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
//!   everything queued before it is written (shutdown, after the drain; tests that read
//!   records through SQL).
//! - K1, Postgres out of reach: a batch that fails because the database cannot be reached
//!   is not dropped. Its writes go to a backlog, their waiting callers are answered
//!   [`Recorded::Queued`] at once (the call's answer does not wait for Postgres), and the
//!   writer retries the backlog's oldest writes with back-off ([`RETRY_FIRST`] doubling to
//!   [`RETRY_MAX`]) until Postgres takes them, in the order they were queued (a call's end
//!   is never written before its start: a batch stops before the end of a call it starts).
//!   Meanwhile every new write joins the backlog. Its size and age are
//!   [`Records::backlog`] (the `loopgate_tool_call_record_backlog` gauges, the journal's
//!   `loopgate_tool_call_record_journal_*`, and `/readyz` detail once it is older than
//!   [`BACKLOG_NOTICE`]).
//! - K1, a replica killed with writes not committed: they are in its journal, which the
//!   next replica on the same directory replays within [`SWEEP`] (at its start, then
//!   every [`SWEEP`]): the writes go through this writer again, a row Postgres already
//!   has is left as it is, and a streamed call's start without its end is written ended
//!   `call_interrupted`.
//! - K1, a replica that dies: its `running` rows carry its id, it writes a heartbeat every
//!   [`HEARTBEAT`], and every replica closes, every [`HEARTBEAT`] too, the running calls of
//!   replicas whose heartbeat is older than [`REPLICA_LEASE`]
//!   (`store::tool_calls::close_interrupted`): `failed` with the problem
//!   `call_interrupted`. A replica that stops gracefully forgets its heartbeat once its
//!   records are flushed ([`Records::leave`]).
//! - The writer has connections of its own ([`Records::connect`], at most
//!   [`WRITER_CONNECTIONS`]) on which Postgres plans its statement once, generically
//!   (`plan_cache_mode = force_generic_plan`): the statement's shape never changes, but
//!   under the default mode Postgres kept choosing a custom plan for each batch (its
//!   arrays' lengths change the estimates), so it planned a multi-CTE statement again on
//!   every batch — measured under `scripts/bench-load`'s cache hits, Postgres' share of the
//!   machine's CPU went from ~33% to ~26% with generic plans. Other queries keep the
//!   default mode on the main pool, where a parameter's value may well change the best plan.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

use crate::call::record_journal::{self, Journal, JournalError, Ticket};
use crate::crypto::new_id;
use crate::results::cache_memory::Bounded;
use crate::store::tool_calls::{self, Outcome, ToolCallRecord, Write};
use crate::store::{OrgId, StoreError};
use crate::telemetry::metrics::Metrics;
use loopgate_engine::ErrorCode;

/// Writes in one statement at most.
pub const MAX_ROWS: usize = 256;
/// How long a batch of writes nobody waits for (written behind their answers) takes more
/// before its statement: measured under `scripts/bench-load`'s cache hits, a
/// transaction cost Postgres about 15 times a row, so fuller batches are most of what a
/// record costs it (docs/performance.md, "Where a call's time goes").
pub const LINGER: Duration = Duration::from_millis(2);
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
/// K1: writes kept for Postgres while it is out of reach, at most.
pub const BACKLOG_ROWS: usize = 50_000;
/// K1: bytes of those writes at most ([`Write::bytes`]).
pub const BACKLOG_BYTES: usize = 128 << 20;
/// K1: the first wait before the backlog is tried again; it doubles up to [`RETRY_MAX`].
pub const RETRY_FIRST: Duration = Duration::from_millis(100);
/// K1: the longest wait between two tries of the backlog.
pub const RETRY_MAX: Duration = Duration::from_secs(2);
/// K1: a backlog older than this is named in `/readyz` detail.
pub const BACKLOG_NOTICE: Duration = Duration::from_secs(5);
/// K1: how often a replica says it is alive, and looks for calls of replicas that died.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// K1: a replica not heard of for this long is dead: its running calls are closed.
pub const REPLICA_LEASE: Duration = Duration::from_secs(10);
/// K1: how often a replica looks for journal segments of replicas that are gone.
pub const SWEEP: Duration = Duration::from_secs(5);
/// K1: segments taken in one sweep at most.
pub const SWEEP_SEGMENTS: usize = 16;
/// K1: a read of a call id this replica does not hold and Postgres does not have (yet)
/// is tried again after each of these waits before it is a 404: another replica may have
/// answered the call and be committing its record behind the answer. 500 ms in all, far
/// above a batch's commit (a few ms; tens under load).
pub const MISS_WAITS: [Duration; 5] = [
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(150),
    Duration::from_millis(175),
];

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

/// How a write went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Committed.
    Written,
    /// K1: Postgres is out of reach; the write is in this replica's backlog and will be
    /// written once it answers.
    Queued,
    /// Journaled and queued: written behind the answer ([`Records::write_behind`]).
    Behind,
}

type Waiter = oneshot::Sender<Result<Recorded, StoreError>>;

enum Job {
    /// A write, its waiter (none when written behind) and its place in the journal.
    Write(Box<Write>, Option<Waiter>, Ticket),
    Flush(oneshot::Sender<()>),
}

/// A call written behind its answer, readable on this replica until its record committed.
struct PendingCall {
    org: OrgId,
    caller: String,
    agent_id: String,
    name: String,
    arguments: String,
    outcome: Outcome,
    created_at: chrono::DateTime<chrono::Utc>,
    finished_at: chrono::DateTime<chrono::Utc>,
}

impl PendingCall {
    fn record(&self, id: &str) -> ToolCallRecord {
        let json = |t: &str| serde_json::from_str(t).ok().map(sqlx::types::Json);
        let (status, result, error) = match &self.outcome {
            Outcome::Succeeded(t) => ("succeeded", json(t), None),
            Outcome::Filled(f) => ("succeeded", json(&f.body.text(&f.fill)), None),
            Outcome::Failed(t) => ("failed", None, json(t)),
        };
        ToolCallRecord {
            id: id.to_owned(),
            agent_id: self.agent_id.clone(),
            name: self.name.clone(),
            status: status.to_owned(),
            result,
            error,
            created_at: self.created_at,
            finished_at: Some(self.finished_at),
        }
    }
}

/// The calls written behind their answers whose records have not committed, by id.
#[derive(Default)]
struct Pending(Mutex<HashMap<String, PendingCall>>);

impl Pending {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, PendingCall>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, w: &Write) {
        if let Write::Once {
            org,
            call,
            outcome,
            started_at,
            finished_at,
        } = w
        {
            self.map().insert(
                call.id.clone(),
                PendingCall {
                    org: org.clone(),
                    caller: call.caller.clone(),
                    agent_id: call.agent_id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    outcome: outcome.clone(),
                    created_at: *started_at,
                    finished_at: *finished_at,
                },
            );
        }
    }

    fn remove(&self, w: &Write) {
        if let Write::Once { call, .. } = w {
            self.map().remove(&call.id);
        }
    }

    fn get<T>(
        &self,
        org: &OrgId,
        caller: &str,
        id: &str,
        f: impl FnOnce(&PendingCall) -> T,
    ) -> Option<T> {
        let map = self.map();
        let p = map.get(id)?;
        (p.org == *org && p.caller == caller).then(|| f(p))
    }
}

/// The backlog's size, shared with readers ([`Records::backlog`]).
#[derive(Default)]
struct BacklogGauge {
    rows: AtomicUsize,
    bytes: AtomicUsize,
    /// Process-clock ms when the backlog began (0: empty).
    since_ms: AtomicU64,
}

fn clock_ms() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// The replica's writer of tool-call records.
#[derive(Clone)]
pub struct Records {
    tx: mpsc::Sender<Job>,
    gauge: Arc<BacklogGauge>,
    replica: Arc<str>,
    pool: PgPool,
    journal: Arc<Journal>,
    pending: Arc<Pending>,
}

/// The backlog of writes waiting for Postgres (K1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    pub rows: usize,
    pub bytes: usize,
    /// How long it has been non-empty.
    pub age: Duration,
    /// Writes journaled and not committed yet (behind answers, queued, or in the backlog).
    pub journal_rows: usize,
    /// The journal's bytes (on disk, or in memory without a directory).
    pub journal_bytes: usize,
}

/// Connections the writer keeps: one statement is in flight at a time.
pub const WRITER_CONNECTIONS: u32 = 1;

impl Records {
    /// Connects the writer's own pool to `url` (its statement planned generically, see the
    /// module header) and starts the writer on it.
    /// `journal`: the directory of the record journal (K1; `None`: kept in memory only).
    pub async fn connect(
        url: &str,
        metrics: Arc<Metrics>,
        journal: Option<&Path>,
    ) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let pool = Self::pool(url)
            .await
            .context("could not connect to Postgres (check DATABASE_URL)")?;
        Self::spawn_with(pool, metrics, journal).with_context(|| {
            format!(
                "could not open the record journal in {} (LOOPGATE_RECORD_JOURNAL_DIR)",
                journal.map(|d| d.display().to_string()).unwrap_or_default()
            )
        })
    }

    /// The writer's own pool (see the module header).
    pub async fn pool(url: &str) -> Result<PgPool, sqlx::Error> {
        use sqlx::Executor as _;
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(WRITER_CONNECTIONS)
            // K1: a batch Postgres cannot take goes to the backlog after this at most, so
            // a call waits no longer for its record while Postgres is away
            .acquire_timeout(Duration::from_secs(2))
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

    /// Starts the writer on `pool` (inside a Tokio runtime) with its journal in memory, and
    /// this replica's heartbeat; `metrics` counts writes and statements (their ratio is the
    /// batch size).
    pub fn spawn(pool: PgPool, metrics: Arc<Metrics>) -> Self {
        let replica: Arc<str> = new_id("rep").into();
        let journal = Journal::in_memory(&replica, BACKLOG_BYTES, BACKLOG_ROWS);
        Self::start(pool, metrics, replica, journal)
    }

    /// [`Records::spawn`] with its journal in `dir` (K1), if any: segments of replicas that
    /// are gone are replayed now and every [`SWEEP`].
    pub fn spawn_with(
        pool: PgPool,
        metrics: Arc<Metrics>,
        dir: Option<&Path>,
    ) -> std::io::Result<Self> {
        let replica: Arc<str> = new_id("rep").into();
        let journal = Journal::open(dir, &replica, BACKLOG_BYTES, BACKLOG_ROWS)?;
        let records = Self::start(pool, metrics, replica, journal);
        if dir.is_some() {
            tokio::spawn(sweep(records.tx.downgrade(), records.clone_weakly()));
        }
        Ok(records)
    }

    fn start(pool: PgPool, metrics: Arc<Metrics>, replica: Arc<str>, journal: Journal) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let gauge = Arc::new(BacklogGauge::default());
        let journal = Arc::new(journal);
        let pending = Arc::new(Pending::default());
        let writer = Writer {
            journal: journal.clone(),
            pending: pending.clone(),
            pool: pool.clone(),
            replica: replica.clone(),
            metrics: metrics.clone(),
            known: Known(Bounded::new(BODIES_KNOWN)),
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            gauge: gauge.clone(),
            flushes: Vec::new(),
        };
        tokio::spawn(writer.run(rx));
        tokio::spawn(heartbeat(
            pool.clone(),
            replica.clone(),
            tx.downgrade(),
            metrics,
        ));
        Self {
            tx,
            gauge,
            replica,
            pool,
            journal,
            pending,
        }
    }

    /// What the sweep needs, without keeping the writer's queue open.
    fn clone_weakly(&self) -> Sweeper {
        Sweeper {
            journal: self.journal.clone(),
            pending: self.pending.clone(),
        }
    }

    /// This replica's id, kept on the running calls it records.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Writes `w` with whatever else is queued, and answers once it is committed, or kept
    /// in the backlog while Postgres is out of reach ([`Recorded::Queued`]). An error: this
    /// write's own (a thread deleted meanwhile), or a backlog too full to keep it.
    pub async fn write(&self, w: Write) -> Result<Recorded, StoreError> {
        let ticket = admit(&self.journal, &w)?;
        let (done, answer) = oneshot::channel();
        if let Err(e) = self
            .tx
            .send(Job::Write(Box::new(w), Some(done), ticket))
            .await
        {
            // never reaches Postgres: not kept either
            drop(e);
            self.journal.done(ticket);
            return Err(StoreError::Unavailable(sqlx::Error::WorkerCrashed));
        }
        answer
            .await
            .unwrap_or(Err(StoreError::Unavailable(sqlx::Error::WorkerCrashed)))
    }

    /// Journals `w` and queues it for the writer, and answers at once: the record is
    /// written behind the answer (no SQL on the caller's path). A call written once is
    /// readable on this replica meanwhile ([`Records::read`]). An error: the journal too
    /// full (or failing) to keep it — the caller must not say it succeeded.
    pub async fn write_behind(&self, w: Write) -> Result<Recorded, StoreError> {
        behind(&self.tx, &self.journal, &self.pending, w).await
    }

    /// The record of call `id` (org and caller as `tool_calls::get`): this replica's own
    /// while it is written behind, else Postgres', tried again after [`MISS_WAITS`] while
    /// it is missing (another replica may be committing it behind its answer).
    pub async fn read(
        &self,
        pool: &PgPool,
        org: &OrgId,
        caller: &str,
        id: &str,
    ) -> Result<ToolCallRecord, StoreError> {
        self.read_with(
            pool,
            org,
            caller,
            id,
            |p| p.record(id),
            |pool| Box::pin(tool_calls::get(pool, org, caller, id)),
        )
        .await
    }

    /// The arguments of call `id`, as [`Records::read`] finds it.
    pub async fn read_arguments(
        &self,
        pool: &PgPool,
        org: &OrgId,
        caller: &str,
        id: &str,
    ) -> Result<serde_json::Value, StoreError> {
        self.read_with(
            pool,
            org,
            caller,
            id,
            |p| serde_json::from_str(&p.arguments).unwrap_or(serde_json::Value::Null),
            |pool| Box::pin(tool_calls::arguments(pool, org, caller, id)),
        )
        .await
    }

    async fn read_with<'a, T>(
        &self,
        pool: &'a PgPool,
        org: &OrgId,
        caller: &str,
        id: &str,
        mine: impl Fn(&PendingCall) -> T,
        stored: impl Fn(
            &'a PgPool,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<T, StoreError>> + Send + 'a>,
        >,
    ) -> Result<T, StoreError> {
        // a call id is `call_` and 22 characters: nothing else is waited for
        let waits = match id.len() == 27 && id.starts_with("call_") {
            true => &MISS_WAITS[..],
            false => &[],
        };
        let mut waits = waits.iter();
        loop {
            if let Some(v) = self.pending.get(org, caller, id, &mine) {
                return Ok(v);
            }
            match stored(pool).await {
                Err(StoreError::NotFound) => match waits.next() {
                    Some(wait) => tokio::time::sleep(*wait).await,
                    None => return Err(StoreError::NotFound),
                },
                other => return other,
            }
        }
    }

    /// Waits until every write queued before this call is written (or failed for its own
    /// reason): with Postgres out of reach, until it is back and the backlog written.
    pub async fn flush(&self) {
        let (done, answer) = oneshot::channel();
        if self.tx.send(Job::Flush(done)).await.is_ok() {
            let _ = answer.await;
        }
    }

    /// The writes waiting for Postgres (K1).
    pub fn backlog(&self) -> Backlog {
        let since = self.gauge.since_ms.load(Ordering::Relaxed);
        let held = self.journal.held();
        Backlog {
            journal_rows: held.rows,
            journal_bytes: held.bytes,
            rows: self.gauge.rows.load(Ordering::Relaxed),
            bytes: self.gauge.bytes.load(Ordering::Relaxed),
            age: match since {
                0 => Duration::ZERO,
                t => Duration::from_millis(clock_ms().saturating_sub(t)),
            },
        }
    }

    /// This replica stops (after [`Records::flush`]): forgets its heartbeat, so whatever it
    /// leaves `running` is closed by the next replica that looks.
    pub async fn leave(&self) {
        if let Err(e) = tool_calls::leave(&self.pool, &self.replica).await {
            tracing::debug!(error = %e, "could not forget this replica's heartbeat");
        }
    }
}

/// The problem document of a call whose replica died before it ended.
fn interrupted_problem() -> String {
    let code = ErrorCode::CallInterrupted;
    serde_json::json!({
        "code": code.as_str(),
        "status": code.status(),
        "detail": "the server running this call stopped before the call ended, so its outcome \
                   is unknown: call the tool again",
    })
    .to_string()
}

/// Journals `w`, if it fits (K1): refused, its call answers 503.
fn admit(journal: &Journal, w: &Write) -> Result<Ticket, StoreError> {
    journal.append(w).map_err(|e| {
        tracing::error!(error = %e, "a tool-call record is refused");
        match e {
            JournalError::Full { .. } => StoreError::Unavailable(sqlx::Error::PoolTimedOut),
            JournalError::Io(e) => StoreError::Unavailable(sqlx::Error::Io(e)),
        }
    })
}

/// [`Records::write_behind`].
async fn behind(
    tx: &mpsc::Sender<Job>,
    journal: &Journal,
    pending: &Pending,
    w: Write,
) -> Result<Recorded, StoreError> {
    let ticket = admit(journal, &w)?;
    pending.insert(&w);
    if let Err(mpsc::error::SendError(Job::Write(w, _, _))) =
        tx.send(Job::Write(Box::new(w), None, ticket)).await
    {
        pending.remove(&w);
        journal.done(ticket);
        return Err(StoreError::Unavailable(sqlx::Error::WorkerCrashed));
    }
    Ok(Recorded::Behind)
}

/// What the sweep uses of [`Records`].
struct Sweeper {
    journal: Arc<Journal>,
    pending: Arc<Pending>,
}

/// K1: takes the journal segments of replicas that are gone (no live process holds them),
/// now and every [`SWEEP`] while the writer lives, and replays their writes through this
/// writer (journaled here first, then the segment deleted). A streamed call's start whose
/// end is not among them is written as ended `call_interrupted` (its replica died during
/// the call); a row Postgres already has is left as it is (`tool_calls::write_all`).
async fn sweep(writer: mpsc::WeakSender<Job>, s: Sweeper) {
    let problem = interrupted_problem();
    let mut tick = tokio::time::interval(SWEEP);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(tx) = writer.upgrade() else { return };
        let journal = s.journal.clone();
        let Ok(orphans) =
            tokio::task::spawn_blocking(move || record_journal::orphans(&journal, SWEEP_SEGMENTS))
                .await
        else {
            continue;
        };
        if orphans.is_empty() {
            continue;
        }
        let ended: HashSet<String> = orphans
            .iter()
            .flat_map(|o| o.read.writes.iter())
            .filter_map(|w| match w {
                Write::Finish { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let (mut replayed, mut skipped) = (0usize, 0usize);
        'segments: for mut orphan in orphans {
            skipped += orphan.read.skipped;
            let writes = std::mem::take(&mut orphan.read.writes);
            for w in writes {
                let w = match w {
                    Write::Start { org, call, at } if !ended.contains(&call.id) => Write::Once {
                        org,
                        call,
                        outcome: Outcome::Failed(problem.clone()),
                        started_at: at,
                        finished_at: chrono::Utc::now(),
                    },
                    w => w,
                };
                if let Err(e) = behind(&tx, &s.journal, &s.pending, w).await {
                    // this journal is full: the segment (unlocked) waits for a later sweep;
                    // what was replayed of it is replayed again then, harmlessly
                    tracing::warn!(error = %e, path = %orphan.path().display(), "record journal replay paused");
                    break 'segments;
                }
                replayed += 1;
            }
            orphan.forget();
        }
        if replayed + skipped > 0 {
            tracing::warn!(
                writes = replayed,
                torn = skipped,
                "replayed tool-call records a replica that stopped had not written"
            );
        }
    }
}

/// K1: says this replica is alive, and closes the calls of replicas that are not, every
/// [`HEARTBEAT`] while the writer lives.
async fn heartbeat(
    pool: PgPool,
    replica: Arc<str>,
    writer: mpsc::WeakSender<Job>,
    metrics: Arc<Metrics>,
) {
    let problem = interrupted_problem();
    let mut tick = tokio::time::interval(HEARTBEAT);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if writer.upgrade().is_none() {
            return;
        }
        if let Err(e) = tool_calls::heartbeat(&pool, &replica).await {
            tracing::debug!(error = %e, "could not write this replica's heartbeat");
            continue;
        }
        match tool_calls::close_interrupted(&pool, REPLICA_LEASE, &problem).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::warn!(
                    calls = n,
                    "closed calls left running by a replica that stopped"
                );
                Metrics::add(&metrics.records_interrupted, n);
            }
            Err(e) => tracing::debug!(error = %e, "could not close interrupted calls"),
        }
    }
}

/// The writer task's state.
struct Writer {
    journal: Arc<Journal>,
    pending: Arc<Pending>,
    pool: PgPool,
    replica: Arc<str>,
    metrics: Arc<Metrics>,
    known: Known,
    /// K1: writes waiting for Postgres, oldest first, with their places in the journal.
    backlog: VecDeque<(Write, Ticket)>,
    backlog_bytes: usize,
    gauge: Arc<BacklogGauge>,
    /// Flushes waiting for the backlog to be written.
    flushes: Vec<oneshot::Sender<()>>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Job>) {
        // a job taken from the queue that did not fit the batch before it
        let mut next: Option<Job> = None;
        loop {
            if !self.backlog.is_empty() {
                // the job that did not fit the failed batch joins the backlog like any
                // other: its caller is answered now, not after the outage
                if let Some(job) = next.take() {
                    self.absorb(job);
                }
                if !self.retry_backlog(&mut rx).await {
                    return;
                }
                continue;
            }
            let first = match next.take() {
                Some(job) => job,
                None => match rx.recv().await {
                    Some(job) => job,
                    None => return,
                },
            };
            let mut writes = Vec::new();
            let mut waiters: Vec<(Option<Waiter>, Ticket)> = Vec::new();
            let mut flushed = Vec::new();
            let (mut bytes, mut started) = (0, HashSet::new());
            let mut job = Some(first);
            // a batch nobody waits for (every write behind its answer, no flush asked)
            // takes what arrives within LINGER of its first drain: fewer, fuller
            // transactions under load; a write someone waits for ends the wait
            let mut linger_until = None;
            loop {
                let Some(j) = job.take() else {
                    let nobody_waits =
                        flushed.is_empty() && waiters.iter().all(|(d, _)| d.is_none());
                    if next.is_some() || writes.len() >= MAX_ROWS || !nobody_waits {
                        break;
                    }
                    let until =
                        *linger_until.get_or_insert_with(|| tokio::time::Instant::now() + LINGER);
                    match tokio::time::timeout_at(until, rx.recv()).await {
                        Ok(Some(j)) => {
                            job = Some(j);
                            continue;
                        }
                        _ => break,
                    }
                };
                match j {
                    Job::Flush(done) => flushed.push(done),
                    Job::Write(mut w, done, ticket) => {
                        self.known.mark(&mut w);
                        let size = w.bytes();
                        // never a call's end in the statement that inserts its start (a
                        // replayed journal queues both)
                        let ends_a_start =
                            matches!(&*w, Write::Finish { id, .. } if started.contains(id));
                        if !writes.is_empty() && (bytes + size > MAX_BYTES || ends_a_start) {
                            next = Some(Job::Write(w, done, ticket));
                            break;
                        }
                        if let Write::Start { call, .. } = &*w {
                            started.insert(call.id.clone());
                        }
                        bytes += size;
                        writes.push(*w);
                        waiters.push((done, ticket));
                    }
                }
                if writes.len() < MAX_ROWS {
                    job = rx.try_recv().ok();
                }
            }
            if !writes.is_empty() {
                let results = self.commit(&writes).await;
                for ((w, (done, ticket)), result) in writes.into_iter().zip(waiters).zip(results) {
                    let answer = match result {
                        // K1: kept until Postgres is back
                        Err(StoreError::Unavailable(_)) => Ok(self.keep(w, ticket)),
                        result => {
                            self.written(&w, ticket);
                            result.map(|()| Recorded::Written)
                        }
                    };
                    if let Some(done) = done {
                        let _ = done.send(answer);
                    } else if let Err(e) = answer {
                        // its caller was answered: the record is lost with its thread
                        tracing::warn!(error = %e, "a tool-call record written behind was refused");
                    }
                }
            }
            // a flush is answered once what was queued before it is written
            if self.backlog.is_empty() {
                for done in flushed {
                    let _ = done.send(());
                }
            } else {
                self.flushes.extend(flushed);
            }
        }
    }

    /// Puts `w` at the end of the backlog (it fits: the journal took it).
    fn keep(&mut self, w: Write, ticket: Ticket) -> Recorded {
        if self.backlog.is_empty() {
            self.gauge.since_ms.store(clock_ms(), Ordering::Relaxed);
        }
        self.backlog_bytes += w.bytes();
        self.backlog.push_back((w, ticket));
        self.publish();
        Recorded::Queued
    }

    /// `w` is committed, or refused for a reason of its own: out of the journal, and no
    /// longer read from memory.
    fn written(&self, w: &Write, ticket: Ticket) {
        self.pending.remove(w);
        self.journal.done(ticket);
    }

    fn publish(&self) {
        self.gauge.rows.store(self.backlog.len(), Ordering::Relaxed);
        self.gauge
            .bytes
            .store(self.backlog_bytes, Ordering::Relaxed);
        if self.backlog.is_empty() {
            self.gauge.since_ms.store(0, Ordering::Relaxed);
        }
    }

    /// A job that arrives while the backlog is not empty joins it (a write) or waits for it
    /// (a flush).
    fn absorb(&mut self, job: Job) {
        match job {
            Job::Write(mut w, done, ticket) => {
                self.known.mark(&mut w);
                let kept = self.keep(*w, ticket);
                if let Some(done) = done {
                    let _ = done.send(Ok(kept));
                }
            }
            Job::Flush(done) => self.flushes.push(done),
        }
    }

    /// One try of the backlog's oldest writes, after a wait (back-off) during which new
    /// jobs join it; `false` once the queue is closed and nothing is left to do.
    async fn retry_backlog(&mut self, rx: &mut mpsc::Receiver<Job>) -> bool {
        let mut delay = RETRY_FIRST;
        while !self.backlog.is_empty() {
            let wake = tokio::time::sleep(delay);
            tokio::pin!(wake);
            loop {
                tokio::select! {
                    job = rx.recv() => match job {
                        Some(job) => self.absorb(job),
                        // nobody can queue any more: go on writing what is kept
                        None => {
                            (&mut wake).await;
                            break;
                        }
                    },
                    () = &mut wake => break,
                }
            }
            // the oldest writes that fit one statement, never a call's end with its start
            let mut batch = Vec::new();
            let (mut bytes, mut started) = (0, HashSet::new());
            while let Some((w, _)) = self.backlog.front() {
                let size = w.bytes();
                let ends_a_start = matches!(w, Write::Finish { id, .. } if started.contains(id));
                if batch.len() == MAX_ROWS
                    || (!batch.is_empty() && bytes + size > MAX_BYTES)
                    || ends_a_start
                {
                    break;
                }
                if let Write::Start { call, .. } = w {
                    started.insert(call.id.clone());
                }
                bytes += size;
                if let Some(w) = self.backlog.pop_front() {
                    batch.push(w);
                }
            }
            Metrics::add(&self.metrics.record_retries, batch.len() as u64);
            let (batch, tickets): (Vec<Write>, Vec<Ticket>) = batch.into_iter().unzip();
            let results = self.commit(&batch).await;
            let mut back = Vec::new();
            for ((w, ticket), r) in batch.into_iter().zip(tickets).zip(results) {
                match r {
                    Err(StoreError::Unavailable(_)) => {
                        back.push((w, ticket));
                        continue;
                    }
                    Ok(()) => {}
                    // its own row was refused (its thread deleted meanwhile): there is
                    // nothing left to record it in
                    Err(e) => tracing::warn!(error = %e, "a kept tool-call record was refused"),
                }
                self.backlog_bytes -= w.bytes().min(self.backlog_bytes);
                self.written(&w, ticket);
            }
            let failed = !back.is_empty();
            for w in back.into_iter().rev() {
                self.backlog.push_front(w);
            }
            self.publish();
            delay = if failed {
                (delay * 2).min(RETRY_MAX)
            } else {
                Duration::ZERO
            };
            if rx.is_closed() && self.backlog.is_empty() {
                break;
            }
        }
        tracing::info!("tool-call record backlog written");
        for done in self.flushes.drain(..) {
            let _ = done.send(());
        }
        !(rx.is_closed() && rx.is_empty())
    }

    /// Writes a batch; each write's own result (with the bodies it carried remembered).
    async fn commit(&mut self, writes: &[Write]) -> Vec<Result<(), StoreError>> {
        Metrics::add(&self.metrics.record_writes, writes.len() as u64);
        let sent = Instant::now();
        let results = commit(&self.pool, &self.replica, writes, &self.metrics).await;
        self.known.wrote(writes, &results, sent);
        results
    }
}

/// Writes a batch; each write's own result.
async fn commit(
    pool: &PgPool,
    replica: &str,
    writes: &[Write],
    metrics: &Metrics,
) -> Vec<Result<(), StoreError>> {
    let n = writes.len();
    Metrics::inc(&metrics.record_statements);
    match tool_calls::write_all(pool, replica, writes).await {
        Ok(()) => (0..n).map(|_| Ok(())).collect(),
        Err(StoreError::Unavailable(e)) => {
            tracing::warn!(error = %e, rows = n, "could not write tool-call records: kept to retry");
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
                out.push(tool_calls::write_all(pool, replica, std::slice::from_ref(w)).await);
            }
            out
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::store::tool_calls::NewCall;
    use crate::store::OrgId;

    fn start(id: &str) -> Write {
        Write::Start {
            org: OrgId::trusted("org_k1"),
            call: NewCall {
                id: id.into(),
                agent_id: "agt_1".into(),
                thread_id: "thr_1".into(),
                caller: "u1".into(),
                name: "t".into(),
                arguments: "{}".into(),
            },
            at: chrono::Utc::now(),
        }
    }

    /// K1: with Postgres out of reach, writes are kept (never dropped) and answered at
    /// once; the backlog says how many and since when, and a flush waits for them.
    #[tokio::test]
    async fn k1_writes_postgres_cannot_take_are_kept_and_shown() {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .acquire_timeout(Duration::from_millis(200))
            .connect_lazy("postgres://postgres@127.0.0.1:1/nothing_listens_here")
            .unwrap();
        let metrics = Arc::new(Metrics::default());
        let records = Records::spawn(pool, metrics.clone());
        assert_eq!(records.backlog().rows, 0);
        assert_eq!(
            records.write(start("call_1")).await.unwrap(),
            Recorded::Queued
        );
        // a later write joins the backlog behind it, also answered at once
        let t = Instant::now();
        assert_eq!(
            records.write(start("call_2")).await.unwrap(),
            Recorded::Queued
        );
        assert!(
            t.elapsed() < Duration::from_millis(150),
            "{:?}",
            t.elapsed()
        );
        let b = records.backlog();
        assert_eq!(b.rows, 2);
        assert!(b.bytes > 0);
        // tried again with back-off meanwhile, and still kept
        tokio::time::sleep(RETRY_FIRST * 4).await;
        assert!(metrics.record_retries.get() >= 2);
        assert_eq!(records.backlog().rows, 2);
        assert!(records.backlog().age >= RETRY_FIRST * 4);
        // a flush waits for Postgres
        let flushed = tokio::time::timeout(Duration::from_millis(300), records.flush()).await;
        assert!(flushed.is_err(), "a flush waits while writes are kept");
    }
}
