//! Page walking end to end: page, offset, body and cursor styles like real public APIs,
//! hostile cursors, exact page multiples, parallel pages, `_continue`, aggregates over
//! walked results, and loopgate's own list protocol.

pub mod aggregates;
pub mod basics;
pub mod by_reference;
pub mod cursors;
pub mod exact_apis;
pub mod hostile_cursors;
pub mod learned_paging;
pub mod pagination;
pub mod parallel;
pub mod resume;
