//! D5 in the runtime: the embedding model this replica searches with, and the tools'
//! vectors. A tool's vector is computed once per embedded text and model, on the
//! blocking pool (never on the async workers), and kept with the tool in Postgres
//! (`store::tool_vectors`), so another replica or a restart reads it instead of
//! computing it again; this replica also keeps the ones it used, by (org, tool id, the
//! embedded text's SHA-256), under the one [`MODEL_ID`] the process runs. Vectors are
//! computed in the background when tools are imported or changed
//! ([`crate::call::vector_jobs`]) and read when an agent's pool index is built
//! ([`crate::call::offered_tools`]); a query then costs one embedding.
//!
//! Without the model (setting `embedding_model_dir` empty, or the directory missing or
//! wrong) search is lexical only: said once in the log at startup, in `/readyz`'s detail
//! and by the `loopgate_search_semantic` gauge; calls never fail for it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::PgPool;

use crate::embedding::{self, EmbedError, Embedder, DIM, MODEL_ID};
use crate::store::tool_vectors::StoredVector;
use crate::store::{self, OrgId};

/// Vectors kept before the map starts over (a bound: 50,000 × 1.5 KiB ≈ 75 MiB).
const MAX_VECTORS: usize = 50_000;

/// A tool's vector is valid for this tool and this text (under the process's model).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VectorKey {
    pub org: String,
    pub tool_id: String,
    pub text_sha256: [u8; 32],
}

impl VectorKey {
    pub fn new(org: &str, tool_id: &str, text: &str) -> Self {
        Self {
            org: org.to_owned(),
            tool_id: tool_id.to_owned(),
            text_sha256: Sha256::digest(text.as_bytes()).into(),
        }
    }
}

/// A vector as stored: little-endian `f32`s.
pub fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector's floats; `None` unless it is [`DIM`] wide.
pub fn from_bytes(b: &[u8]) -> Option<Arc<[f32]>> {
    (b.len() == DIM * 4).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// What [`Semantic::vectors`] computed: to be kept with the tools.
#[derive(Debug, Default)]
pub struct Computed {
    pub vectors: Vec<StoredVector>,
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

    /// The tools of `keys` whose vector for that text this replica does not keep.
    pub fn missing_tools<'a>(&self, keys: impl Iterator<Item = &'a VectorKey>) -> Vec<String> {
        let kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        keys.filter(|k| !kept.contains_key(*k))
            .map(|k| k.tool_id.clone())
            .collect()
    }

    /// The vectors this replica keeps for `keys` (`None` for those it does not).
    pub fn kept<'a>(&self, keys: impl Iterator<Item = &'a VectorKey>) -> Vec<Option<Arc<[f32]>>> {
        let kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        keys.map(|k| kept.get(k).cloned()).collect()
    }

    /// Keeps the stored vectors (read back from Postgres) that are some key's: its tool,
    /// its text's hash, [`DIM`] wide. CPU work (decoding): off the async workers.
    pub fn keep_stored<'a>(
        &self,
        keys: impl Iterator<Item = &'a VectorKey>,
        stored: &[StoredVector],
    ) {
        if stored.is_empty() {
            return;
        }
        let by_tool: HashMap<&str, &VectorKey> = keys.map(|k| (k.tool_id.as_str(), k)).collect();
        let mut kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() + stored.len() > MAX_VECTORS {
            kept.clear();
        }
        for s in stored {
            let Some(key) = by_tool.get(s.tool_id.as_str()) else {
                continue;
            };
            if key.text_sha256[..] != s.text_sha256[..] {
                continue;
            }
            if let Some(v) = from_bytes(&s.vector) {
                kept.insert((*key).clone(), v);
            }
        }
    }

    /// The vectors of `tools` (key, text), from memory or computed now for the ones not
    /// kept; `computed` gets the latter, to be kept with their tools. CPU work: run it off
    /// the async workers.
    pub fn vectors(
        &self,
        tools: &[(VectorKey, String)],
        computed: &mut Computed,
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
            let mut kept = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() + made.len() > MAX_VECTORS {
                kept.clear();
            }
            for (&i, v) in missing.iter().zip(made) {
                computed.vectors.push(StoredVector {
                    tool_id: tools[i].0.tool_id.clone(),
                    text_sha256: tools[i].0.text_sha256.to_vec(),
                    vector: to_bytes(&v),
                });
                let v: Arc<[f32]> = v.into();
                kept.insert(tools[i].0.clone(), v.clone());
                out[i] = Some(v);
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

/// How long a search waits for its pool's stored vectors before computing them instead.
const READ_WAIT: Duration = Duration::from_secs(2);

/// The stored vectors of `tool_ids` under the running model (one statement per thousand
/// tools). A failed or slow read is logged and answers none: those vectors are then
/// computed again — slower, never a failed search.
pub async fn read_stored(pool: &PgPool, org: &OrgId, tool_ids: &[String]) -> Vec<StoredVector> {
    if tool_ids.is_empty() {
        return Vec::new();
    }
    match tokio::time::timeout(
        READ_WAIT,
        store::tool_vectors::read(pool, org, MODEL_ID, tool_ids),
    )
    .await
    {
        Ok(Ok(stored)) => stored,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "stored tool vectors not read: computing them");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!("stored tool vectors not read in time: computing them");
            Vec::new()
        }
    }
}

/// Keeps what [`Semantic::vectors`] computed with the tools (logged if Postgres refuses:
/// they are then computed again by the next replica that needs them).
pub async fn store_computed(pool: &PgPool, org: &OrgId, mut computed: Computed) {
    if computed.vectors.is_empty() {
        return;
    }
    computed.vectors.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
    computed.vectors.dedup_by(|a, b| a.tool_id == b.tool_id);
    if let Err(e) = store::tool_vectors::write(pool, org, MODEL_ID, &computed.vectors).await {
        tracing::warn!(error = %e, "tool vectors not stored: another replica will compute them again");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_survives_its_bytes_and_a_wrong_width_is_refused() {
        let v: Vec<f32> = (0..DIM).map(|i| i as f32 / 7.0 - 3.0).collect();
        let back = from_bytes(&to_bytes(&v)).expect("DIM wide");
        assert_eq!(&back[..], &v[..]);
        assert!(from_bytes(&to_bytes(&v[..DIM - 1])).is_none());
        assert!(from_bytes(&[]).is_none());
    }

    #[test]
    fn stored_vectors_are_kept_only_for_their_text_and_org() {
        let s = Semantic::default();
        let key = VectorKey::new("org_a", "tool_1", "send a message");
        let changed = VectorKey::new("org_a", "tool_2", "send a letter");
        let stored = [
            StoredVector {
                tool_id: "tool_1".into(),
                text_sha256: key.text_sha256.to_vec(),
                vector: to_bytes(&[0.5; DIM]),
            },
            // tool_2's vector of an older text
            StoredVector {
                tool_id: "tool_2".into(),
                text_sha256: VectorKey::new("org_a", "tool_2", "old")
                    .text_sha256
                    .to_vec(),
                vector: to_bytes(&[0.5; DIM]),
            },
        ];
        let keys = [key.clone(), changed];
        assert_eq!(s.missing_tools(keys.iter()), ["tool_1", "tool_2"]);
        s.keep_stored(keys.iter(), &stored);
        assert_eq!(
            s.missing_tools(keys.iter()),
            ["tool_2"],
            "a vector of another text is not used"
        );
        let other_org = VectorKey::new("org_b", "tool_1", "send a message");
        assert_eq!(s.missing_tools([other_org].iter()), ["tool_1"]);
    }
}
