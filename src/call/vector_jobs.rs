//! D6 in the runtime: tool vectors are computed when tools are imported, synced, created
//! or changed — in the background, one job at a time per replica, a chunk of tools per
//! turn of the blocking pool (so searches of every org go on between chunks) — and kept
//! with the tools in Postgres. Never on a search: a search that finds a pooled tool
//! without its vector ranks that tool by words, says so, and asks for the vector here
//! (so the work resumes after a restart or a lost job). [`VectorJobs::epoch`] moves on
//! when vectors become available, so a pool index built without them is built again.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sqlx::PgPool;

use crate::call::search_docs::SearchDocs;
use crate::call::search_docs::{keyed, tool_source};
use crate::call::tool_vectors::{self, Computed, Semantic, VectorKey};
use crate::discovery::{self, ToolDoc};
use crate::store::tools::Tool;
use crate::store::{self, OrgId};
use crate::telemetry::metrics::Metrics;
use crate::walk::cpu_jobs::Cpu;

/// Tools embedded per turn of the blocking pool (about 10 ms each).
const CHUNK: usize = 16;
/// Tools waiting at most per replica; beyond it a request is dropped (a later search
/// asks again).
const MAX_WAITING: usize = 50_000;

/// The tools of this replica waiting for their vectors, and the epoch of what is ready.
pub struct VectorJobs {
    waiting: Mutex<HashSet<(String, String)>>,
    turn: tokio::sync::Semaphore,
    epoch: AtomicU64,
}

impl Default for VectorJobs {
    fn default() -> Self {
        Self::new()
    }
}

impl VectorJobs {
    pub fn new() -> Self {
        Self {
            waiting: Mutex::default(),
            turn: tokio::sync::Semaphore::new(1),
            epoch: AtomicU64::new(0),
        }
    }

    /// Moves on each time vectors are added to this replica's memory.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Tools of this replica still waiting.
    pub fn waiting(&self) -> usize {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// The ids of `tool_ids` not already waiting, now marked waiting.
    fn claim(&self, org: &OrgId, tool_ids: &[String]) -> Vec<String> {
        let mut w = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let room = MAX_WAITING.saturating_sub(w.len());
        tool_ids
            .iter()
            .filter(|id| w.insert((org.to_string(), (*id).clone())))
            .take(room)
            .cloned()
            .collect()
    }

    fn release(&self, org: &OrgId, tool_ids: &[String]) {
        let mut w = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        for id in tool_ids {
            w.remove(&(org.to_string(), id.clone()));
        }
    }
}

/// What the background job reads and writes with.
pub struct Deps<'a> {
    pub pool: &'a PgPool,
    pub cpu: &'a Arc<Cpu>,
    pub metrics: &'a Arc<Metrics>,
    pub docs: &'a Arc<SearchDocs>,
}

/// Asks for the vectors of `tool_ids` (the org's), computed in the background and kept
/// with the tools. Returns at once; without the model it does nothing.
pub fn request(
    jobs: &Arc<VectorJobs>,
    semantic: &Arc<Semantic>,
    deps: Deps<'_>,
    org: &OrgId,
    tool_ids: &[String],
) {
    if semantic.embedder().is_none() || tool_ids.is_empty() {
        return;
    }
    let ids = jobs.claim(org, tool_ids);
    if ids.is_empty() {
        return;
    }
    let (jobs, semantic, org) = (jobs.clone(), semantic.clone(), org.clone());
    let (pool, cpu, metrics, docs) = (
        deps.pool.clone(),
        deps.cpu.clone(),
        deps.metrics.clone(),
        deps.docs.clone(),
    );
    tokio::spawn(async move {
        // whatever ends the task (a panic in a chunk, the runtime shutting down), the
        // ids it did not get to stop waiting, so a later search asks for them again
        let guard = Release {
            jobs: jobs.clone(),
            org: org.clone(),
            ids,
        };
        let Ok(_turn) = jobs.turn.acquire().await else {
            return;
        };
        for chunk in guard.ids.chunks(CHUNK) {
            match embed_chunk(&semantic, &docs, &pool, &cpu, &org, chunk).await {
                Ok(n) => {
                    Metrics::add(&metrics.tool_vectors_computed, n as u64);
                    jobs.release(&org, chunk);
                    // pools built without these vectors are built again, once
                    if n > 0 {
                        jobs.epoch.fetch_add(1, Ordering::AcqRel);
                    }
                }
                Err(e) => {
                    jobs.release(&org, chunk);
                    tracing::warn!(error = %e, "tool vectors not computed: a later search asks again")
                }
            }
        }
    });
}

/// Releases a job's ids when it ends (those already released are no longer there).
struct Release {
    jobs: Arc<VectorJobs>,
    org: OrgId,
    ids: Vec<String>,
}

impl Drop for Release {
    fn drop(&mut self) {
        self.jobs.release(&self.org, &self.ids);
    }
}

async fn embed_chunk(
    semantic: &Arc<Semantic>,
    docs: &Arc<SearchDocs>,
    pool: &PgPool,
    cpu: &Arc<Cpu>,
    org: &OrgId,
    ids: &[String],
) -> Result<usize, store::StoreError> {
    let tools = store::tools::get_many(pool, org, ids).await?;
    let mut providers = std::collections::HashMap::new();
    for t in &tools {
        if !providers.contains_key(&t.provider_id) {
            let p = store::providers::get(pool, org, &t.provider_id).await?;
            providers.insert(t.provider_id.clone(), p);
        }
    }
    let named: Vec<(Tool, Option<String>, String)> = tools
        .into_iter()
        .filter_map(|t| {
            let p = providers.get(&t.provider_id)?;
            let kit = discovery::toolkit_of_tool(
                t.kind,
                t.toolkit.as_deref(),
                p.toolkit.as_deref(),
                &p.name,
            )
            .map(str::to_owned);
            Some((t, kit, p.name.clone()))
        })
        .collect();
    // the documents analysed here are the ones a search of this replica merges
    let (d, o) = (docs.clone(), org.to_string());
    let keyed: Vec<(VectorKey, String)> = cpu
        .run(org, usize::MAX, move || {
            named
                .iter()
                .map(|(t, kit, provider)| {
                    d.get(&o, t, kit.as_deref(), provider);
                    let doc = ToolDoc::build(&tool_source(t, kit.as_deref(), provider));
                    keyed(&o, &t.id, &doc)
                })
                .collect()
        })
        .await;
    let missing = semantic.missing_tools(keyed.iter().map(|(k, _)| k));
    if missing.is_empty() {
        return Ok(0);
    }
    let stored = tool_vectors::read_stored(pool, org, &missing).await;
    let sem = semantic.clone();
    let computed = cpu
        .run(org, usize::MAX, move || {
            sem.keep_stored(keyed.iter().map(|(k, _)| k), &stored);
            let mut computed = Computed::default();
            if let Err(e) = sem.vectors(&keyed, &mut computed) {
                tracing::warn!(error = %e, "tool vectors not computed");
            }
            computed
        })
        .await;
    let n = computed.vectors.len();
    tool_vectors::store_computed(pool, org, computed).await;
    Ok(n)
}
