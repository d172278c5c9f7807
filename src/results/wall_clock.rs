//! Wall-clock time for cache freshness (C3), injectable so tests can move it.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Utc};

pub trait WallClock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

pub struct SystemWallClock;

impl WallClock for SystemWallClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock plus an offset that tests advance.
#[derive(Default)]
pub struct ManualClock {
    offset_ms: AtomicI64,
}

impl ManualClock {
    pub fn advance(&self, by: std::time::Duration) {
        self.offset_ms
            .fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl WallClock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::milliseconds(self.offset_ms.load(Ordering::SeqCst))
    }
}
