//! Compiled tools, cached per replica: a tool's definition with what the engine learned
//! from its schema (pagination analysis, argument signature), and its provider, each kept
//! under the version (`updated_at`) it was built from. A call reads the versions with the
//! agent in one statement ([`crate::store::agent_load`]) and only a changed or unseen tool
//! or provider is read again and recompiled — which works across replicas without any
//! message between them: a write anywhere bumps the version every replica reads (and,
//! through the API, the org's config epoch that [`crate::call::agent_memory`] is kept by).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::store::providers::Provider;
use crate::store::tools::Tool;
use crate::upstream::Template;
use loopgate_engine::ToolAnalysis;

/// Entries kept before the cache starts over (a bound, not a tuning knob: a replica
/// serving more distinct tools than this recompiles some of them).
const MAX_ENTRIES: usize = 20_000;

/// A tool compiled against its provider, once per version of both: its analysis (pagination,
/// argument signature) and its request template (base URL parsed, each argument placed).
#[derive(Debug)]
pub struct CompiledTool {
    pub tool: Arc<Tool>,
    pub analysis: Arc<ToolAnalysis>,
    pub template: Arc<Template>,
}

impl CompiledTool {
    pub fn compile(tool: Tool, provider: &Provider) -> Self {
        let analysis = Arc::new(loopgate_engine::analyze(&tool.input_schema.0));
        let template = Arc::new(Template::compile(
            &provider.base_url,
            &tool.path,
            &tool.input_schema.0,
        ));
        Self {
            tool: Arc::new(tool),
            analysis,
            template,
        }
    }
}

type Key = (String, String);

/// A tool's version is its own and its provider's `updated_at`; a provider's, its own.
type ToolVersion = (DateTime<Utc>, DateTime<Utc>);

struct Versioned<T, V> {
    version: V,
    value: Arc<T>,
}

type Map<T, V> = Mutex<HashMap<Key, Versioned<T, V>>>;

/// The per-replica cache, keyed by (org, id).
#[derive(Default)]
pub struct CompiledTools {
    tools: Map<CompiledTool, ToolVersion>,
    providers: Map<Provider, DateTime<Utc>>,
}

fn get<T, V: PartialEq>(map: &Map<T, V>, org: &str, id: &str, version: V) -> Option<Arc<T>> {
    let map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.get(&(org.to_owned(), id.to_owned()))
        .filter(|v| v.version == version)
        .map(|v| v.value.clone())
}

fn latest<T, V>(map: &Map<T, V>, org: &str, id: &str) -> Option<Arc<T>> {
    let map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.get(&(org.to_owned(), id.to_owned()))
        .map(|v| v.value.clone())
}

fn put<T, V>(map: &Map<T, V>, org: &str, id: &str, version: V, value: T) -> Arc<T> {
    let value = Arc::new(value);
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(
        (org.to_owned(), id.to_owned()),
        Versioned {
            version,
            value: value.clone(),
        },
    );
    value
}

impl CompiledTools {
    pub fn tool(&self, org: &str, id: &str, version: ToolVersion) -> Option<Arc<CompiledTool>> {
        get(&self.tools, org, id, version)
    }

    /// Compiles `tool` against `provider` and keeps it under both their versions.
    pub fn put_tool(&self, org: &str, tool: Tool, provider: &Provider) -> Arc<CompiledTool> {
        let (id, version) = (tool.id.clone(), (tool.updated_at, provider.updated_at));
        put(
            &self.tools,
            org,
            &id,
            version,
            CompiledTool::compile(tool, provider),
        )
    }

    /// Whatever version is kept (a write raced the read of the versions).
    pub fn latest_tool(&self, org: &str, id: &str) -> Option<Arc<CompiledTool>> {
        latest(&self.tools, org, id)
    }

    pub fn latest_provider(&self, org: &str, id: &str) -> Option<Arc<Provider>> {
        latest(&self.providers, org, id)
    }

    pub fn provider(&self, org: &str, id: &str, version: DateTime<Utc>) -> Option<Arc<Provider>> {
        get(&self.providers, org, id, version)
    }

    pub fn put_provider(&self, org: &str, provider: Provider) -> Arc<Provider> {
        let (id, version) = (provider.id.clone(), provider.updated_at);
        put(&self.providers, org, &id, version, provider)
    }
}
