//! What walks produced, kept: stored results under a `_resultId` and the thread's
//! retrieval restriction (G3–G6), the dataset cache of complete walks (C1–C6) and this
//! replica's memory of it, a result's final JSON text, and the wall clock that decides
//! freshness. Storage only: presenting and the retrieval tools live in `call`.

pub mod cache_memory;
pub mod dataset_cache;
pub mod result_json;
pub mod stored_results;
pub mod wall_clock;

pub use result_json::ResultJson;
pub use stored_results::ThreadKey;
