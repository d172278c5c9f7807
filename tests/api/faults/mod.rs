//! When something misbehaves: the upstream fault matrix, clients that leave, Postgres or
//! Redis stopped under a running app, Redis' eviction policy and key TTLs, replicas of
//! the real binary acting as one service, and nothing lost under faults (K1–K5): one
//! promise at a time (`nothing_lost`) and all of them under load (`fault_suite`).

pub mod dependencies;
pub mod fault_suite;
pub mod matrix;
pub mod nothing_lost;
pub mod record_journal;
pub mod redis_policy;
pub mod redis_ttls;
pub mod replicas;
pub mod resilience;
