//! D5 in the runtime: the embedding model this replica searches with, and the tools'
//! vectors, computed once per tool version and kept, by (org, tool id, version, the
//! embedded text's hash) under the one [`MODEL_ID`] the process runs. Vectors are
//! computed only when an agent's pool index is built ([`crate::call::offered_tools`]),
//! for the tools not seen at that version yet, on the blocking pool, never on the async
//! workers; a query then costs one embedding.
//!
//! Without the model (setting `embedding_model_dir` empty, or the directory missing or
//! wrong) search is lexical only: said once in the log at startup, in `/readyz`'s detail
//! and by the `loopgate_search_semantic` gauge; calls never fail for it.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::embedding::{self, EmbedError, Embedder, MODEL_ID};

/// Vectors kept before the map starts over (a bound: 50,000 × 1.5 KiB ≈ 75 MiB).
const MAX_VECTORS: usize = 50_000;

/// A tool's vector is valid for this tool, at this version, for this text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VectorKey {
    pub org: String,
    pub tool_id: String,
    pub version: DateTime<Utc>,
    pub text_hash: u64,
}

impl VectorKey {
    pub fn new(org: &str, tool_id: &str, version: DateTime<Utc>, text: &str) -> Self {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        Self {
            org: org.to_owned(),
            tool_id: tool_id.to_owned(),
            version,
            text_hash: h.finish(),
        }
    }
}

pub struct Semantic {
    embedder: Result<Arc<Embedder>, String>,
    vectors: Mutex<HashMap<VectorKey, Arc<[f32]>>>,
}

impl Default for Semantic {
    /// Lexical only (tests that build a runtime by hand).
    fn default() -> Self {
        Self::lexical("no embedding model configured")
    }
}

impl Semantic {
    pub fn lexical(why: &str) -> Self {
        Self {
            embedder: Err(why.to_owned()),
            vectors: Mutex::default(),
        }
    }

    /// The model of the `embedding_model_dir` setting (empty: none), logging the outcome.
    pub fn from_setting(dir: &str) -> Self {
        if dir.trim().is_empty() {
            tracing::warn!("embedding_model_dir is empty: tool search is lexical only");
            return Self::lexical("embedding_model_dir is empty");
        }
        match embedding::shared(Path::new(dir)) {
            Ok(e) => {
                tracing::info!(
                    model = MODEL_ID,
                    dir,
                    "tool search ranks by meaning and words"
                );
                Self {
                    embedder: Ok(e),
                    vectors: Mutex::default(),
                }
            }
            Err(why) => {
                tracing::warn!(dir, error = %why, "embedding model not loaded: tool search is lexical only (run scripts/setup-model)");
                Self::lexical(&why)
            }
        }
    }

    /// Why search is lexical only; `None` when the model is loaded.
    pub fn unavailable(&self) -> Option<&str> {
        self.embedder.as_ref().err().map(String::as_str)
    }

    pub fn embedder(&self) -> Option<&Arc<Embedder>> {
        self.embedder.as_ref().ok()
    }

    /// The vectors of `tools` (key, text), from memory or computed now for the ones not
    /// kept; `computed` counts the latter. CPU work: run it off the async workers.
    pub fn vectors(
        &self,
        tools: &[(VectorKey, String)],
        computed: &mut u64,
    ) -> Result<Vec<Arc<[f32]>>, EmbedError> {
        let Ok(embedder) = &self.embedder else {
            return Err(EmbedError::Missing("no model".into()));
        };
        let mut out: Vec<Option<Arc<[f32]>>> = {
            let kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            tools.iter().map(|(k, _)| kept.get(k).cloned()).collect()
        };
        let missing: Vec<usize> = (0..tools.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|&i| tools[i].1.as_str()).collect();
            let made = embedder.embed(&texts)?;
            *computed += made.len() as u64;
            let mut kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() + made.len() > MAX_VECTORS {
                kept.clear();
            }
            for (&i, v) in missing.iter().zip(made) {
                let v: Arc<[f32]> = v.into();
                kept.insert(tools[i].0.clone(), v.clone());
                out[i] = Some(v);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}
