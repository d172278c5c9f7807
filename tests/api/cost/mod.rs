//! What a call costs, counted rather than timed: SQL statements and Redis commands per
//! call, record writes and agent loads (measurements, ignored), CPU-bound work off the
//! async workers.

pub mod agent_load_cost;
pub mod app_bindings_cost;
pub mod cpu_jobs;
pub mod record_write_cost;
pub mod redis_per_call;
pub mod round_trips;
pub mod sql_per_call;
