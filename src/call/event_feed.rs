//! Writing and following the event log of one call or run ([`crate::call::event_log`]).
//!
//! [`Feed`]: the chunks of a running call or run go, in order, through one writer task
//! into the log; pushing never blocks the walk, and a log that cannot be written (Redis
//! down) costs followers their live view, never the call.
//!
//! [`follow`]: what `GET …/events` streams. A finished call or run whose chunks are still
//! buffered is replayed (from after `Last-Event-ID`); one whose buffer is gone is told
//! from its Postgres record ([`Finished`]). A running one is followed live until its
//! `finish` chunk or its record says it finished, with the record checked every few
//! seconds so a call whose chunks were lost (or whose replica died) still ends with its
//! recorded outcome. A tool call's log never holds its result: its closing chunks come
//! from the record, and the call wakes its followers when it is recorded. Followers stop when
//! this replica drains (the client reconnects elsewhere with `Last-Event-ID`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::call::event_log::EventLog;
use crate::call::ui_stream;
use crate::call::RuntimeError;
use crate::walk::drain::Drain;
use loopgate_engine::{Progress, ProgressSink};

/// The live chunks of one call or run, on their way into the log.
pub struct Feed {
    tx: Option<mpsc::UnboundedSender<String>>,
    writer: Option<JoinHandle<()>>,
}

/// Chunks written in one round trip at most.
const BATCH: usize = 32;

impl Feed {
    pub fn open(log: &EventLog, key: String) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let log = log.clone();
        let writer = tokio::spawn(async move {
            let mut warned = false;
            let mut batch = Vec::with_capacity(BATCH);
            // what has queued up meanwhile goes in one round trip, in order
            while rx.recv_many(&mut batch, BATCH).await > 0 {
                if let Err(e) = log.append_all(&key, &batch).await {
                    if !warned {
                        tracing::warn!(error = %e, "event log unavailable: followers on other replicas miss live chunks");
                        warned = true;
                    }
                }
                batch.clear();
            }
        });
        Self {
            tx: Some(tx),
            writer: Some(writer),
        }
    }

    pub fn push(&self, chunk: Value) {
        self.push_text(chunk.to_string());
    }

    /// A chunk already written as JSON text.
    pub fn push_text(&self, chunk: String) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(chunk);
        }
    }

    /// Waits until every pushed chunk is in the log (or could not be written).
    pub async fn close(mut self) {
        self.tx = None;
        if let Some(w) = self.writer.take() {
            let _ = w.await;
        }
    }
}

/// Progress of one call: to the caller's own sink and into the log (when it has one).
pub struct Tee<'a, P> {
    pub feed: Option<&'a Feed>,
    pub call_id: &'a str,
    pub inner: &'a P,
}

impl<P: ProgressSink> ProgressSink for Tee<'_, P> {
    fn progress(&self, p: &Progress) {
        self.inner.progress(p);
        if let Some(feed) = self.feed {
            feed.push(ui_stream::progress(self.call_id, p));
        }
    }
}

/// A finished call or run as its record tells it.
pub struct Finished {
    /// The whole stream, for a follower that saw nothing of it.
    pub full: Vec<Value>,
    /// What ends a stream a follower saw part of.
    pub closing: Vec<Value>,
}

/// How long a follower stays attached at most.
pub const MAX_FOLLOW: Duration = Duration::from_secs(15 * 60);
/// How often a follower re-reads the record while nothing arrives.
const RECHECK: Duration = Duration::from_secs(2);

/// What a follower hands the client.
#[derive(Debug)]
pub enum Event {
    /// A chunk, with its log id (none for chunks told from the record).
    Chunk(Option<String>, Value),
    /// The stream is complete (`[DONE]` on the wire).
    Done,
}

/// Streams the events of `key` after `last_id` into `tx` until the `finish` chunk, then
/// [`Event::Done`]; ends without `Done` when this replica drains or [`MAX_FOLLOW`] passes.
/// `record` says whether the call or run has finished (and how), from Postgres.
pub async fn follow<F, Fut>(
    log: &EventLog,
    drain: &Arc<Drain>,
    key: &str,
    mut last_id: Option<String>,
    record: F,
    tx: mpsc::Sender<Event>,
) -> Result<(), RuntimeError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Option<Finished>, RuntimeError>>,
{
    let mut sub = log.subscribe(key).await.ok();
    let started = tokio::time::Instant::now();
    let mut saw_any = last_id.is_some();
    loop {
        // the record first: entries written before it finished are then all in the log
        let finished = record().await?;
        let entries = log
            .read_after(key, last_id.as_deref())
            .await
            .unwrap_or_default();
        for (id, text) in entries {
            let Ok(chunk) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let end = ui_stream::is_finish(&chunk);
            last_id = Some(id.clone());
            saw_any = true;
            if tx.send(Event::Chunk(Some(id), chunk)).await.is_err() {
                return Ok(());
            }
            if end {
                let _ = tx.send(Event::Done).await;
                return Ok(());
            }
        }
        if let Some(f) = finished {
            let tail = if saw_any { f.closing } else { f.full };
            for chunk in tail {
                if tx.send(Event::Chunk(None, chunk)).await.is_err() {
                    return Ok(());
                }
            }
            let _ = tx.send(Event::Done).await;
            return Ok(());
        }
        if drain.is_draining() || started.elapsed() > MAX_FOLLOW || tx.is_closed() {
            return Ok(());
        }
        match &mut sub {
            Some(s) => s.wait(RECHECK).await,
            None => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}
