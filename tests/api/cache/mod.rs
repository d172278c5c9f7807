//! The dataset cache (C1–C6), in Redis and in each replica's memory.

pub mod dataset;
pub mod memory;
