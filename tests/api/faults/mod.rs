//! When something misbehaves: the upstream fault matrix, clients that leave, Postgres or
//! Redis stopped under a running app, Redis' eviction policy and key TTLs, replicas of
//! the real binary acting as one service.

pub mod dependencies;
pub mod matrix;
pub mod redis_policy;
pub mod redis_ttls;
pub mod replicas;
pub mod resilience;
