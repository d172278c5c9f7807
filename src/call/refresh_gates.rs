//! One OAuth refresh per connection at a time within a replica, waited for in process.
//! The connection's row lock (`store::connections::lock_for_refresh`) serialises refreshes
//! across replicas, but each waiter for it holds a pool connection in an open transaction,
//! and the holder keeps its own while the token endpoint answers (up to its timeout): N
//! concurrent calls of one user due for a refresh would take N of the replica's pool
//! connections, stalling every tenant's calls. Behind this gate only one of them per
//! replica is at the database; the others wait here, holding nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

type Gate = Arc<tokio::sync::Mutex<()>>;

#[derive(Default)]
pub struct RefreshGates {
    gates: Mutex<HashMap<String, Gate>>,
    waiting: AtomicU64,
}

/// Held while this call refreshes (or re-reads) the connection; the gate is forgotten when
/// its last holder or waiter is done.
pub struct Passage<'a> {
    gates: &'a RefreshGates,
    key: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl RefreshGates {
    /// Waits for the connection `key`'s turn.
    pub async fn enter(&self, key: &str) -> Passage<'_> {
        let gate = {
            let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
            gates.entry(key.to_owned()).or_default().clone()
        };
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let mut passage = Passage {
            gates: self,
            key: key.to_owned(),
            guard: None,
        };
        let guard = Waiting(&self.waiting).around(gate.lock_owned()).await;
        passage.guard = Some(guard);
        passage
    }

    /// Calls waiting for another call's refresh of the same connection.
    pub fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::Relaxed)
    }
}

/// Counts a waiter until its wait ends (or its call goes away).
struct Waiting<'a>(&'a AtomicU64);

impl Waiting<'_> {
    async fn around<F: std::future::Future>(self, f: F) -> F::Output {
        f.await
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Passage<'_> {
    fn drop(&mut self) {
        let mut gates = self.gates.gates.lock().unwrap_or_else(|p| p.into_inner());
        drop(self.guard.take());
        // the map's and the guard's references were the last: nobody waits for it
        if gates
            .get(&self.key)
            .is_some_and(|g| Arc::strong_count(g) == 1)
        {
            gates.remove(&self.key);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    #[tokio::test]
    async fn one_passage_per_connection_and_the_gate_is_forgotten_after() {
        let gates = RefreshGates::default();
        let first = gates.enter("con_1").await;
        let other = gates.enter("con_2").await; // another connection is not held back
        let mut second = Box::pin(gates.enter("con_1"));
        assert!((&mut second).now_or_never().is_none());
        assert_eq!(gates.waiting(), 1);
        drop(first);
        let second = second.await;
        assert_eq!(gates.waiting(), 0);
        drop((second, other));
        assert!(gates.gates.lock().unwrap().is_empty());
    }
}
