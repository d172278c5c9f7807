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
use crate::call::tool_vectors::{self, Computed, Semantic, VectorKey};
use crate::call::{AgentView, BoundTool, Runtime, RuntimeError, ThreadKey};
use crate::discovery::hybrid::tool_text;
use crate::discovery::meta::{
    LOAD_MAX, LOAD_TOOL, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_TOOLS,
};
use crate::discovery::{self, Candidate, DenseIndex, HybridIndex, Place, SearchIndex, ToolText};
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
    indexes: Mutex<HashMap<String, (u64, Arc<HybridIndex>)>>,
    semantic: Arc<Semantic>,
    queries: QueryVectors,
}

impl IndexCache {
    pub fn new(semantic: Semantic) -> Self {
        Self {
            indexes: Mutex::default(),
            semantic: Arc::new(semantic),
            queries: QueryVectors::default(),
        }
    }

    pub fn semantic(&self) -> &Semantic {
        &self.semantic
    }
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
    /// blocking pool, then shared by every call until the pooled tools change.
    async fn pool_index(
        &self,
        agent: &AgentView,
        org: &OrgId,
        pooled: &[&BoundTool],
    ) -> Arc<HybridIndex> {
        let semantic = self.search_indexes.semantic.clone();
        let mut h = DefaultHasher::new();
        for b in pooled {
            (&b.tool.id, &b.tool.updated_at, toolkit_of(b)).hash(&mut h);
        }
        semantic.embedder().is_some().hash(&mut h);
        let fp = h.finish();
        {
            let cache = self
                .search_indexes
                .indexes
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some((f, idx)) = cache.get(&agent.id) {
                if *f == fp {
                    return idx.clone();
                }
            }
        }
        let tools: Vec<(Arc<Tool>, String)> = pooled
            .iter()
            .map(|b| (b.tool.clone(), toolkit_of(b).unwrap_or("").to_owned()))
            .collect();
        let cpu = self.walker.cpu().clone();
        let tools = Arc::new(tools);
        // on the blocking pool: each tool's embedded text and key, and the ones this
        // replica does not keep
        let (keyed, missing) = if semantic.embedder().is_some() {
            let (t, sem, o) = (tools.clone(), semantic.clone(), org.to_string());
            let (keyed, missing) = cpu
                .run(org, usize::MAX, move || {
                    let keyed = vector_keys(&t, &o);
                    let missing = sem.missing_tools(keyed.iter().map(|(k, _)| k));
                    (keyed, missing)
                })
                .await;
            (Some(keyed), missing)
        } else {
            (None, Vec::new())
        };
        let stored = tool_vectors::read_stored(&self.pool, org, &missing).await;
        // the build and the storing of what it computed go on even if this call is
        // dropped: vectors kept in this replica's memory are also kept with the tools
        let (pool, org_c, metrics) = (self.pool.clone(), org.clone(), self.metrics().clone());
        let task = tokio::spawn(async move {
            let job = move || build_index(&tools, keyed.as_deref(), &stored, &semantic, &metrics);
            let (idx, computed) = cpu.run(&org_c, usize::MAX, job).await;
            tokio::spawn(
                async move { tool_vectors::store_computed(&pool, &org_c, computed).await },
            );
            idx
        });
        let idx = match task.await {
            Ok(idx) => Arc::new(idx),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // the runtime is shutting down
            Err(_) => Arc::new(HybridIndex::default()),
        };
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

    /// `search_tools {query, limit?}` → `{tools: [{name, description, toolkit}]}` over the
    /// pooled tools not loaded yet, best first.
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
        let pooled: Vec<&BoundTool> = offer.pooled(agent).collect();
        let loaded = pooled
            .iter()
            .filter(|b| offer.loaded.contains(&b.tool.name))
            .count();
        if pooled.len() == loaded {
            return Ok(json!({ "tools": [] }));
        }
        let index = self.pool_index(agent, &thread.org, &pooled).await;
        let qv = match index.dense.is_some() {
            true => self.query_vector(&thread.org, query).await,
            false => None,
        };
        let mode = if qv.is_some() { "hybrid" } else { "lexical" };
        self.metrics().search_queries.inc(&[("mode", mode)]);
        let tools: Vec<Value> = index
            .search(query, qv.as_deref(), limit + loaded)
            .into_iter()
            .filter(|&i| !offer.loaded.contains(&pooled[i].tool.name))
            .take(limit)
            .map(|i| {
                let b = pooled[i];
                json!({
                    "name": b.tool.name,
                    "description": discovery::short_description(&b.tool.description, 200),
                    "toolkit": toolkit_of(b),
                })
            })
            .collect();
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

fn tool_texts(tools: &[(Arc<Tool>, String)]) -> Vec<ToolText<'_>> {
    tools
        .iter()
        .map(|(t, kit)| ToolText {
            name: &t.name,
            description: &t.description,
            toolkit: kit,
            input_schema: &t.input_schema.0,
        })
        .collect()
}

/// Each pooled tool's vector key and the text its vector embeds.
fn vector_keys(tools: &[(Arc<Tool>, String)], org: &str) -> Vec<(VectorKey, String)> {
    tools
        .iter()
        .zip(tool_texts(tools))
        .map(|((t, _), text)| {
            let doc = tool_text(&text);
            (VectorKey::new(org, &t.id, &doc), doc)
        })
        .collect()
}

/// BM25F over the pooled tools and, with the model and `keyed` (from [`vector_keys`]),
/// their vectors (kept, read back from Postgres as `stored`, or computed now for the new
/// ones: returned to be stored). CPU work, run on the blocking pool.
fn build_index(
    tools: &[(Arc<Tool>, String)],
    keyed: Option<&[(VectorKey, String)]>,
    stored: &[StoredVector],
    semantic: &Semantic,
    metrics: &Metrics,
) -> (HybridIndex, Computed) {
    let lexical = SearchIndex::build(&tool_texts(tools));
    let mut computed = Computed::default();
    let dense = keyed.filter(|_| semantic.embedder().is_some()).and_then(|keyed| {
        semantic.keep_stored(keyed.iter().map(|(k, _)| k), stored);
        let out = semantic.vectors(keyed, &mut computed);
        Metrics::add(&metrics.tool_vectors_computed, computed.vectors.len() as u64);
        match out {
            Ok(vs) => {
                let rows: Vec<&[f32]> = vs.iter().map(|v| &v[..]).collect();
                Some(DenseIndex::new(DIM, &rows))
            }
            Err(e) => {
                tracing::warn!(error = %e, "tool vectors not computed: this pool is searched lexically");
                None
            }
        }
    });
    (HybridIndex { lexical, dense }, computed)
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
