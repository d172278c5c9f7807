//! D1–D2 in the runtime: which of the agent's tools this thread is offered (placement
//! under the agent's budget, plus what `load_tool` loaded in this thread, kept in
//! Postgres), and the `search_tools` / `load_tool` meta-tools. The search index of an
//! agent's pool is built once and rebuilt when the pooled tools change; every thread of
//! the agent shares it (what a thread loaded is left out of its answers, not of the
//! index). A query's vector is kept per org ([`crate::call::query_vectors`]).

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::call::query_vectors::{query_key, QueryVectors};
use crate::call::search_docs::{SearchDoc, SearchDocs};
use crate::call::tool_vectors::{self, Semantic};
use crate::call::vector_jobs::{self, VectorJobs};
use crate::call::{AgentView, BoundTool, Runtime, RuntimeError, ThreadKey};
use crate::discovery::meta::{
    LOAD_MAX, LOAD_TOOL, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_TOOLS,
};
use crate::discovery::{self, Candidate, DenseIndex, HybridIndex, Place, SearchIndex};
use crate::embedding::DIM;
use crate::store::loaded_tools;
use crate::store::tool_vectors::StoredVector;
use crate::store::tools::Tool;
use crate::store::OrgId;
use crate::telemetry::metrics::Metrics;
use loopgate_engine::EngineError;

/// The connected-app toolkit of a bound tool; `None` for the org's own API and MCP tools.
pub fn toolkit_of(b: &BoundTool) -> Option<&str> {
    discovery::toolkit_of_tool(
        b.tool.kind,
        b.tool.toolkit.as_deref(),
        b.provider.toolkit.as_deref(),
        &b.provider.name,
    )
}

/// The label a bound tool is searched and filtered under (D6 `toolkit`): its connected-app
/// toolkit, else its provider's name.
pub fn search_label(b: &BoundTool) -> &str {
    toolkit_of(b).unwrap_or(&b.provider.name)
}

/// What one thread of an agent is offered.
pub struct Offer {
    /// Index-aligned with `AgentView::tools`.
    pub place: Vec<Place>,
    /// Tools loaded in this thread with `load_tool`.
    pub loaded: HashSet<String>,
}

impl Offer {
    /// Whether the model may call the agent's `i`-th tool directly in this thread.
    pub fn offered(&self, agent: &AgentView, i: usize) -> bool {
        self.place[i] == Place::Direct || self.loaded.contains(&agent.tools[i].tool.name)
    }
    pub fn any_pooled(&self) -> bool {
        self.place.contains(&Place::Pooled)
    }
    pub fn pooled<'a>(&'a self, agent: &'a AgentView) -> impl Iterator<Item = &'a BoundTool> + 'a {
        agent
            .tools
            .iter()
            .zip(&self.place)
            .filter(|(_, p)| **p == Place::Pooled)
            .map(|(t, _)| t)
    }
}

/// Search indexes of agents' pools, by agent, with a fingerprint of the pooled tools,
/// and the model that embeds tools and queries (D5).
#[derive(Default)]
pub struct IndexCache {
    indexes: Mutex<HashMap<String, (u64, Arc<PoolIndex>)>>,
    semantic: Arc<Semantic>,
    queries: QueryVectors,
    jobs: Arc<VectorJobs>,
    docs: Arc<SearchDocs>,
}

impl IndexCache {
    pub fn new(semantic: Semantic) -> Self {
        Self {
            indexes: Mutex::default(),
            semantic: Arc::new(semantic),
            queries: QueryVectors::default(),
            jobs: Arc::new(VectorJobs::new()),
            docs: Arc::default(),
        }
    }

    pub fn semantic(&self) -> &Semantic {
        &self.semantic
    }

    pub fn jobs(&self) -> &Arc<VectorJobs> {
        &self.jobs
    }
}

/// A pool's index, and how many of its tools had no vector when it was built (ranked by
/// words only; the index is built again once the background job has made more).
pub struct PoolIndex {
    pub index: HybridIndex,
    pub without_vectors: usize,
    /// [`VectorJobs::epoch`] when it was built.
    epoch: u64,
}

const INDEX_CACHE_MAX: usize = 1000;

impl AgentView {
    /// D2: the placement of the agent's bindings under its budget.
    pub fn placement(&self) -> Vec<Place> {
        let candidates: Vec<Candidate<'_>> = self
            .tools
            .iter()
            .map(|b| Candidate {
                toolkit: toolkit_of(b),
                discovery: b.binding.discovery,
            })
            .collect();
        discovery::place(&candidates, self.budget)
    }

    /// The connected-app toolkits the agent holds, sorted.
    pub fn toolkits(&self) -> Vec<&str> {
        let mut kits: Vec<&str> = self.tools.iter().filter_map(toolkit_of).collect();
        kits.sort_unstable();
        kits.dedup();
        kits
    }
}

fn invalid(detail: String) -> RuntimeError {
    RuntimeError::Engine(EngineError::InvalidArguments { detail })
}

impl Runtime {
    /// The thread's offer: placement, and (only when something is pooled) what it loaded.
    pub async fn offer(
        &self,
        agent: &AgentView,
        thread: &ThreadKey,
    ) -> Result<Offer, RuntimeError> {
        let place = agent.placement();
        let loaded = if place.contains(&Place::Pooled) {
            loaded_tools::list(&self.pool, &thread.org, &thread.thread_id)
                .await?
                .into_iter()
                .collect()
        } else {
            HashSet::new()
        };
        Ok(Offer { place, loaded })
    }

    /// The pool's index: built once per agent and pool version (and model) on the
    /// blocking pool, then shared by every call until the pooled tools change. It reads
    /// the vectors kept with the tools and computes none (D6): tools without one are
    /// asked for in the background and ranked by words until the index is built again.
    async fn pool_index(
        &self,
        agent: &AgentView,
        org: &OrgId,
        pooled: &[&BoundTool],
    ) -> Arc<PoolIndex> {
        let semantic = self.search_indexes.semantic.clone();
        let jobs = self.search_indexes.jobs.clone();
        let mut h = DefaultHasher::new();
        for b in pooled {
            (
                &b.tool.id,
                &b.tool.updated_at,
                toolkit_of(b),
                &b.provider.name,
            )
                .hash(&mut h);
        }
        semantic.embedder().is_some().hash(&mut h);
        let fp = h.finish();
        let epoch = jobs.epoch();
        {
            let cache = self
                .search_indexes
                .indexes
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some((f, idx)) = cache.get(&agent.id) {
                if *f == fp && (idx.without_vectors == 0 || idx.epoch == epoch) {
                    return idx.clone();
                }
            }
        }
        let bound: Vec<(Arc<Tool>, Option<String>, String)> = pooled
            .iter()
            .map(|b| {
                (
                    b.tool.clone(),
                    toolkit_of(b).map(str::to_owned),
                    b.provider.name.clone(),
                )
            })
            .collect();
        let cpu = self.walker.cpu().clone();
        // on the blocking pool: each tool's analysed document (kept per tool version)
        // and the tools whose vectors this replica does not keep
        let (sem, docs, o) = (
            semantic.clone(),
            self.search_indexes.docs.clone(),
            org.to_string(),
        );
        let (found, missing) = cpu
            .run(org, usize::MAX, move || {
                let found: Vec<(SearchDoc, String)> = bound
                    .iter()
                    .map(|(t, kit, provider)| {
                        let kit = kit.as_deref();
                        let label = kit.unwrap_or(provider).to_lowercase();
                        (docs.get(&o, t, kit, provider), label)
                    })
                    .collect();
                let missing = match sem.embedder() {
                    Some(_) => sem.missing_tools(found.iter().map(|(d, _)| &d.vector)),
                    None => Vec::new(),
                };
                (found, missing)
            })
            .await;
        let stored = tool_vectors::read_stored(&self.pool, org, &missing).await;
        let sem = semantic.clone();
        let job = move || build_index(found, &stored, &sem);
        let (index, absent) = cpu.run(org, usize::MAX, job).await;
        vector_jobs::request(&jobs, &semantic, self.vector_deps(), org, &absent);
        let idx = Arc::new(PoolIndex {
            index,
            without_vectors: absent.len(),
            epoch,
        });
        let mut cache = self
            .search_indexes
            .indexes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if cache.len() >= INDEX_CACHE_MAX {
            cache.clear();
        }
        cache.insert(agent.id.clone(), (fp, idx.clone()));
        idx
    }

    /// Tools of this replica waiting for their vectors (the `loopgate_tool_vectors_waiting`
    /// gauge).
    pub fn tool_vectors_waiting(&self) -> usize {
        self.search_indexes.jobs.waiting()
    }

    /// Asks for the vectors of tools just imported, synced, created or changed (D6):
    /// computed in the background, never on a search.
    pub fn embed_tools_later(&self, org: &OrgId, tool_ids: &[String]) {
        vector_jobs::request(
            &self.search_indexes.jobs,
            &self.search_indexes.semantic,
            self.vector_deps(),
            org,
            tool_ids,
        );
    }

    fn vector_deps(&self) -> vector_jobs::Deps<'_> {
        vector_jobs::Deps {
            pool: &self.pool,
            cpu: self.walker.cpu(),
            metrics: self.metrics(),
            docs: &self.search_indexes.docs,
        }
    }

    /// Why tool search is lexical only (`/readyz`, the `loopgate_search_semantic` gauge);
    /// `None` when it also ranks by meaning.
    pub fn semantic_unavailable(&self) -> Option<&str> {
        self.search_indexes.semantic.unavailable()
    }

    /// The query's vector: kept for the org when asked lately, else computed on the
    /// blocking pool (its first [`crate::embedding::QUERY_TOKENS`] tokens); `None` without
    /// the model (or when embedding failed, logged: the search is then lexical, never a
    /// failed call).
    async fn query_vector(&self, org: &OrgId, query: &str) -> Option<Arc<[f32]>> {
        let embedder = self.search_indexes.semantic.embedder()?.clone();
        let key = query_key(query);
        let queries = &self.search_indexes.queries;
        if let Some(v) = queries.get(org.as_str(), &key) {
            Metrics::inc(&self.metrics().search_query_vectors_kept);
            return Some(v);
        }
        let q = key.clone();
        let out = self
            .walker
            .cpu()
            .run(org, usize::MAX, move || embedder.embed_query(&q))
            .await;
        match out {
            Ok(v) => {
                let v: Arc<[f32]> = v.into();
                queries.put(org.as_str(), key, v.clone());
                Some(v)
            }
            Err(e) => {
                tracing::warn!(error = %e, "query not embedded: this search is lexical only");
                None
            }
        }
    }

    /// `search_tools {query, toolkit?, limit?}` → `{tools: [{name, description, toolkit}]}`
    /// over the pooled tools not loaded yet (of that toolkit), best first; `note` says
    /// when some tools were ranked by words only.
    pub(crate) async fn search_tools(
        &self,
        agent: &AgentView,
        thread: &ThreadKey,
        offer: &Offer,
        args: &Value,
    ) -> Result<Value, RuntimeError> {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .ok_or_else(|| {
                invalid(format!(
                    "{SEARCH_TOOLS} needs `query`: what you want to do, in plain words"
                ))
            })?;
        if query.len() > 1000 {
            return Err(invalid(format!(
                "{SEARCH_TOOLS}: `query` must be at most 1000 characters"
            )));
        }
        let limit = match args.get("limit") {
            None | Some(Value::Null) => SEARCH_DEFAULT_LIMIT,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=SEARCH_MAX_LIMIT as u64).contains(n))
                .ok_or_else(|| {
                    invalid(format!(
                        "{SEARCH_TOOLS}: `limit` must be an integer from 1 to {SEARCH_MAX_LIMIT}"
                    ))
                })? as usize,
        };
        // the index is the agent's whole pool (shared by its threads); what this thread
        // loaded already is left out of the answer
        let toolkit = match args.get("toolkit") {
            None | Some(Value::Null) => None,
            Some(Value::String(k)) if !k.trim().is_empty() => Some(k.trim()),
            Some(_) => {
                return Err(invalid(format!(
                    "{SEARCH_TOOLS}: `toolkit` must be one of the toolkit names listed in its description"
                )))
            }
        };
        let pooled: Vec<&BoundTool> = offer.pooled(agent).collect();
        if let Some(k) = toolkit {
            if !pooled
                .iter()
                .any(|b| search_label(b).eq_ignore_ascii_case(k))
            {
                let mut kits: Vec<&str> = pooled.iter().map(|b| search_label(b)).collect();
                kits.sort_unstable();
                kits.dedup();
                kits.truncate(crate::discovery::meta::LISTED_TOOLKITS);
                return Err(invalid(format!(
                    "{SEARCH_TOOLS}: no toolkit named '{k}' is searchable here; toolkits: {}",
                    kits.join(", ")
                )));
            }
        }
        let loaded = pooled
            .iter()
            .filter(|b| offer.loaded.contains(&b.tool.name))
            .count();
        if pooled.len() == loaded {
            return Ok(json!({ "tools": [] }));
        }
        let pool = self.pool_index(agent, &thread.org, &pooled).await;
        let index = &pool.index;
        let qv = match index.dense.is_some() {
            true => self.query_vector(&thread.org, query).await,
            false => None,
        };
        let mode = if qv.is_some() { "hybrid" } else { "lexical" };
        self.metrics().search_queries.inc(&[("mode", mode)]);
        let tools: Vec<Value> = index
            .search(query, qv.as_deref(), toolkit, limit + loaded)
            .into_iter()
            .filter(|&i| !offer.loaded.contains(&pooled[i].tool.name))
            .take(limit)
            .map(|i| {
                let b = pooled[i];
                json!({
                    "name": b.tool.name,
                    "description": discovery::short_description(&b.tool.description, 200),
                    "toolkit": search_label(b),
                })
            })
            .collect();
        if qv.is_some() && pool.without_vectors > 0 {
            return Ok(json!({ "tools": tools, "note": format!(
                "{} of {} tools were ranked by their words only: their meaning is still being indexed",
                pool.without_vectors, pooled.len()
            )}));
        }
        Ok(json!({ "tools": tools }))
    }

    /// `load_tool {toolName | toolNames}` → `{loaded}`: the tools are offered directly for
    /// the rest of this thread.
    pub(crate) async fn load_tool(
        &self,
        agent: &AgentView,
        thread: &ThreadKey,
        args: &Value,
    ) -> Result<Value, RuntimeError> {
        let mut names: Vec<String> = Vec::new();
        if let Some(n) = args.get("toolName").and_then(Value::as_str) {
            names.push(n.to_string());
        }
        match args.get("toolNames") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) if list.len() <= LOAD_MAX => {
                for v in list {
                    let n = v.as_str().ok_or_else(|| {
                        invalid(format!(
                            "{LOAD_TOOL}: `toolNames` must be a list of tool names"
                        ))
                    })?;
                    names.push(n.to_string());
                }
            }
            Some(_) => {
                return Err(invalid(format!(
                    "{LOAD_TOOL}: `toolNames` must be a list of at most {LOAD_MAX} tool names"
                )))
            }
        }
        if names.is_empty() {
            return Err(invalid(format!(
                "{LOAD_TOOL} needs `toolName` (one name) or `toolNames` (a list), as returned by {SEARCH_TOOLS}"
            )));
        }
        names.dedup();
        for n in &names {
            if agent.tool(n).is_none() {
                return Err(RuntimeError::UnknownTool(unknown_tool_detail(agent, n)));
            }
        }
        loaded_tools::add(&self.pool, &thread.org, &thread.thread_id, &names).await?;
        Ok(json!({ "loaded": names }))
    }
}

/// BM25F over the pooled tools' analysed documents (`found`: each document and the
/// tool's label) and, with the model, the vectors kept in this replica's memory or read
/// back from Postgres (`stored`). Returns the index and the tools that have no vector
/// yet (asked for in the background). CPU work, run on the blocking pool.
fn build_index(
    found: Vec<(SearchDoc, String)>,
    stored: &[StoredVector],
    semantic: &Semantic,
) -> (HybridIndex, Vec<String>) {
    let mut absent = Vec::new();
    let dense = semantic.embedder().map(|_| {
        semantic.keep_stored(found.iter().map(|(d, _)| &d.vector), stored);
        // what was read back counts even if the replica's map started over in between
        // (its bound): a pool never loses the vectors it just read
        let by_id: HashMap<&str, &SearchDoc> = found
            .iter()
            .map(|(d, _)| (d.vector.tool_id.as_str(), d))
            .collect();
        let read: HashMap<&str, Arc<[f32]>> = stored
            .iter()
            .filter_map(|s| {
                let d = by_id.get(s.tool_id.as_str())?;
                (d.vector.text_sha256[..] == s.text_sha256[..])
                    .then(|| tool_vectors::from_bytes(&s.vector))
                    .flatten()
                    .map(|v| (s.tool_id.as_str(), v))
            })
            .collect();
        let kept: Vec<Option<Arc<[f32]>>> = semantic
            .kept(found.iter().map(|(d, _)| &d.vector))
            .into_iter()
            .zip(&found)
            .map(|(v, (d, _))| v.or_else(|| read.get(d.vector.tool_id.as_str()).cloned()))
            .collect();
        let zero = [0f32; DIM];
        let rows: Vec<&[f32]> = kept
            .iter()
            .zip(&found)
            .map(|(v, (d, _))| match v {
                Some(v) => &v[..],
                None => {
                    absent.push(d.vector.tool_id.clone());
                    &zero[..]
                }
            })
            .collect();
        DenseIndex::new(DIM, &rows)
    });
    let (analysed, labels): (Vec<_>, Vec<_>) =
        found.into_iter().map(|(d, l)| (d.analysed, l)).unzip();
    (
        HybridIndex {
            lexical: SearchIndex::from_analysed(analysed),
            dense,
            labels,
        },
        absent,
    )
}

/// An unknown tool name, with the agent's closest tool names (D1).
pub fn unknown_tool_detail(agent: &AgentView, name: &str) -> String {
    let close = discovery::close_matches(name, agent.tools.iter().map(|t| t.tool.name.as_str()), 5);
    let hint = if close.is_empty() {
        let mut names: Vec<&str> = agent
            .tools
            .iter()
            .take(30)
            .map(|t| t.tool.name.as_str())
            .collect();
        if agent.tools.len() > 30 {
            names.push("…");
        }
        names.extend([
            crate::call::retrieval_tools::QUERY_TOOL,
            crate::call::retrieval_tools::FETCH_TOOL,
        ]);
        format!(
            "available tools: {} (or {SEARCH_TOOLS} to find one)",
            names.join(", ")
        )
    } else {
        format!("did you mean: {}?", close.join(", "))
    };
    format!("there is no tool named '{name}' for this agent; {hint}")
}
