//! A counting global allocator for unit tests that bound memory (a large walk's rows are
//! held once, and writing them copies no more than a piece at a time). It
//! counts the bytes live on each thread and their peak, so a test bounds what a piece of
//! code holds on top of what was there before it. Only the calling thread is counted:
//! a test that measures async work runs it on a current-thread runtime (`#[tokio::test]`),
//! where every task it spawns runs on that thread too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts what the system allocator hands out; a test binary registers it as its
/// `#[global_allocator]`.
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(by: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + by;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to `System` as it is; only counters change beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes live on this thread since a [`Mark`].
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// The most held at once beyond what was live at the mark.
    pub peak: isize,
    /// Still held now beyond what was live at the mark (negative: freed).
    pub kept: isize,
}

/// Where counting starts.
pub struct Mark(isize);

impl Mark {
    pub fn now() -> Self {
        let live = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(live));
        Mark(live)
    }

    pub fn usage(&self) -> Usage {
        Usage {
            peak: PEAK.with(Cell::get) - self.0,
            kept: LIVE.with(Cell::get) - self.0,
        }
    }
}
