//! Running one bound tool against the world: the engine's ports over the real HTTP and
//! MCP callers, the dataset cache around the walk (lookup, coalescing, write), the bound
//! on concurrent walks per org, the CPU pool for work proportional to a payload, and the
//! replica's drain. No conversation: `call` presents what a walk returns.

pub mod bound_tool;
pub mod cancel;
pub mod cpu_jobs;
pub mod credential;
pub mod drain;
pub mod engine_ports;
pub mod error;
pub mod progress_relay;
pub mod run_tool;
pub mod walk_slots;

use std::sync::Arc;

use crate::kv::Kv;
use crate::results::cache_memory::CacheMemory;
use crate::results::dataset_cache::Coalescer;
use crate::results::wall_clock::WallClock;
use crate::telemetry::metrics::Metrics;
use crate::upstream::{McpSessions, RateLimits, UpstreamClient};
use loopgate_engine::Limits;

pub use bound_tool::BoundTool;
pub use error::RuntimeError;

/// Everything a walk needs from this replica, owned here: the upstream callers and their
/// rate limits, the bound on concurrent walks, the dataset cache's coalescing and memory,
/// the CPU pool and the drain. Built once at startup ([`Walker::new`]); the tool-call
/// layer reaches the shared handles through the accessors.
pub struct Walker {
    kv: Kv,
    http: UpstreamClient,
    mcp_sessions: McpSessions,
    rate_limits: RateLimits,
    slots: walk_slots::WalkSlots,
    limits: Limits,
    metrics: Arc<Metrics>,
    coalescer: Coalescer,
    fingerprint_key: [u8; 32],
    clock: Arc<dyn WallClock>,
    drain: Arc<drain::Drain>,
    cpu: Arc<cpu_jobs::Cpu>,
    cache_memory: CacheMemory,
    cache_max_entry_bytes: usize,
}

/// The parts a [`Walker`] is built from.
pub struct WalkerParts {
    pub kv: Kv,
    pub http: UpstreamClient,
    /// Open sessions with MCP servers (M1), reused by every call of this process.
    pub mcp_sessions: McpSessions,
    pub rate_limits: RateLimits,
    /// The bound on concurrent walks per org, across replicas.
    pub slots: walk_slots::WalkSlots,
    pub limits: Limits,
    pub metrics: Arc<Metrics>,
    /// Dataset cache: identical walks in this process run once.
    pub coalescer: Coalescer,
    /// Keys credential fingerprints in cache keys (derived from the credential key).
    pub fingerprint_key: [u8; 32],
    pub clock: Arc<dyn WallClock>,
    /// Graceful shutdown: refuses new work, cuts walks at the end of the grace period.
    pub drain: Arc<drain::Drain>,
    /// Work proportional to a payload's size: off the async workers, capped per org.
    pub cpu: Arc<cpu_jobs::Cpu>,
    /// Dataset cache entries (and results presented from them) this replica has decoded.
    pub cache_memory: CacheMemory,
    /// The largest dataset cache entry written (`cache_max_entry_bytes`).
    pub cache_max_entry_bytes: usize,
}

impl Walker {
    pub fn new(p: WalkerParts) -> Self {
        Walker {
            kv: p.kv,
            http: p.http,
            mcp_sessions: p.mcp_sessions,
            rate_limits: p.rate_limits,
            slots: p.slots,
            limits: p.limits,
            metrics: p.metrics,
            coalescer: p.coalescer,
            fingerprint_key: p.fingerprint_key,
            clock: p.clock,
            drain: p.drain,
            cpu: p.cpu,
            cache_memory: p.cache_memory,
            cache_max_entry_bytes: p.cache_max_entry_bytes,
        }
    }

    pub fn kv(&self) -> &Kv {
        &self.kv
    }
    pub fn http(&self) -> &UpstreamClient {
        &self.http
    }
    pub fn mcp_sessions(&self) -> &McpSessions {
        &self.mcp_sessions
    }
    /// Each provider's shared rate limiter (P3), across replicas.
    pub fn rate_limits(&self) -> &RateLimits {
        &self.rate_limits
    }
    /// The service's engine bounds (an agent may lower its size-guard budget).
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }
    pub fn clock(&self) -> &Arc<dyn WallClock> {
        &self.clock
    }
    pub fn drain(&self) -> &Arc<drain::Drain> {
        &self.drain
    }
    pub fn cpu(&self) -> &Arc<cpu_jobs::Cpu> {
        &self.cpu
    }
    pub fn cache_memory(&self) -> &CacheMemory {
        &self.cache_memory
    }
    pub fn cache_max_entry_bytes(&self) -> usize {
        self.cache_max_entry_bytes
    }
}
