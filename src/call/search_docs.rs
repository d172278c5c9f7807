//! D6 in the runtime: each tool's search document, analysed once per tool version and
//! kept by this replica ([`SearchDocs`]), with the key of its vector. A pool's index is
//! merged from these ([`crate::discovery::SearchIndex::from_analysed`]) without reading
//! a tool's text again, so a new agent's first search over tools this replica has seen
//! (imported here, or searched by another agent) costs a merge, not an analysis. The
//! background vector job analyses the tools it embeds, so tools imported on this replica
//! are ready before any agent searches them.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use rustc_hash::FxHashMap;

use crate::call::tool_vectors::VectorKey;
use crate::discovery::hybrid::tool_text;
use crate::discovery::search::AnalysedDoc;
use crate::discovery::{ToolDoc, ToolSource};
use crate::store::tools::{Tool, ToolKind};

/// What a search embeds of a tool: its document's text under its toolkit and provider.
pub fn tool_source<'a>(t: &'a Tool, toolkit: Option<&'a str>, provider: &'a str) -> ToolSource<'a> {
    ToolSource {
        name: &t.name,
        description: &t.description,
        method: &t.method,
        path: &t.path,
        input_schema: &t.input_schema.0,
        toolkit: toolkit.unwrap_or(provider),
        provider,
        mcp: t.kind == ToolKind::Mcp,
    }
}

/// The vector key and embedded text of one tool's document.
pub fn keyed(org: &str, tool_id: &str, doc: &ToolDoc) -> (VectorKey, String) {
    let text = tool_text(doc);
    (VectorKey::new(org, tool_id, &text), text)
}

/// Documents kept at most (about 2 KiB each); past it the map starts over.
const MAX_DOCS: usize = 50_000;

/// What a document is of: the tool's id and version, its toolkit and provider names.
type DocKey = (String, DateTime<Utc>, Option<String>, String);

/// One tool's analysed document and its vector's key.
#[derive(Clone)]
pub struct SearchDoc {
    pub analysed: Arc<AnalysedDoc>,
    pub vector: VectorKey,
}

#[derive(Default)]
pub struct SearchDocs {
    docs: Mutex<FxHashMap<DocKey, SearchDoc>>,
}

impl SearchDocs {
    /// The document of `tool` (of org `org`) under its toolkit and provider: kept, or
    /// analysed now and kept. CPU work: call it off the async workers.
    pub fn get(&self, org: &str, tool: &Tool, toolkit: Option<&str>, provider: &str) -> SearchDoc {
        let key: DocKey = (
            tool.id.clone(),
            tool.updated_at,
            toolkit.map(str::to_owned),
            provider.to_owned(),
        );
        if let Some(d) = self
            .docs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return d.clone();
        }
        let doc = ToolDoc::build(&tool_source(tool, toolkit, provider));
        let (vector, _) = keyed(org, &tool.id, &doc);
        let made = SearchDoc {
            analysed: Arc::new(AnalysedDoc::new(&doc)),
            vector,
        };
        let mut docs = self.docs.lock().unwrap_or_else(|p| p.into_inner());
        if docs.len() >= MAX_DOCS {
            docs.clear();
        }
        docs.insert(key, made.clone());
        made
    }
}
