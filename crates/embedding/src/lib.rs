//! Sentence embeddings in process, on CPU (D5): all-minilm-l6-v2 run by [`single`], a
//! forward pass in plain Rust, its `tokenizer.json` read by the `tokenizers` crate. The
//! model directory (setting `embedding_model_dir`, filled by `scripts/setup-model`) holds
//! `config.json`, `tokenizer.json` and `model.safetensors`; the weights are checked
//! against their pinned SHA-256 before use, so a replica never searches with other
//! vectors than the ones its tools were embedded with ([`MODEL_ID`] names both).
//!
//! A query costs one [`Embedder::embed_query`]: 3.9 ms p50 for the evaluation requests
//! on this project's 2-core machine, 1.9× faster than `candle`'s pass, which this crate
//! used before, in the same run (`measure_a_query_against_candles_pass`): its matrix
//! products pack the weights anew for a dozen rows. Tools are embedded by
//! [`Embedder::embed`], once per text and model, kept with the tool
//! (`call::tool_vectors`). Both are CPU work: callers run them off the async
//! workers. `candle` is kept for the tests: its implementation of the same model
//! (`bert.rs`) is the reference [`single`] is checked against.

#[cfg(test)]
mod bert;
pub mod single;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

/// The model and weights a vector was made with; kept beside every stored vector. The
/// forward pass moved from `candle`'s to [`single`] under the same id: the two give the
/// same vectors (cosine 0.9999991 at worst, tested), so vectors stored before stay valid.
pub const MODEL_ID: &str = "all-minilm-l6-v2@53aa5117";
/// SHA-256 of `model.safetensors`, `tokenizer.json` and `config.json` as
/// `scripts/setup-model` pins them.
pub const WEIGHTS_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
pub const TOKENIZER_SHA256: &str =
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037";
pub const CONFIG_SHA256: &str = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41";
/// Width of a vector.
pub const DIM: usize = 384;
/// Tokens kept of a text (the model was trained on 128-token inputs); the rest is cut.
pub const MAX_TOKENS: usize = 128;
/// Tokens kept of a query (`[CLS]` and `[SEP]` included): a request worded the way
/// people ask fits; a longer one costs no more than this.
pub const QUERY_TOKENS: usize = 32;

/// The fields of the model's `config.json` the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub hidden_act: String,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model not found: {0}")]
    Missing(String),
    #[error("embedding model could not be loaded: {0}")]
    Load(String),
    #[error("embedding failed: {0}")]
    Run(String),
}

fn load_err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Load(e.to_string())
}

fn run_err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Run(e.to_string())
}

pub struct Embedder {
    single: single::Single,
    tokenizer: Tokenizer,
}

fn file(dir: &Path, name: &str) -> Result<PathBuf, EmbedError> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(EmbedError::Missing(format!(
            "{} (run scripts/setup-model)",
            p.display()
        )))
    }
}

fn sha256_of(path: &Path) -> Result<String, EmbedError> {
    let mut f = std::fs::File::open(path).map_err(load_err)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(load_err)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

fn check_sha(path: &Path, want: &str) -> Result<(), EmbedError> {
    let got = sha256_of(path)?;
    if got == want {
        Ok(())
    } else {
        Err(EmbedError::Load(format!(
            "{} has SHA-256 {got}, expected {want} (run scripts/setup-model)",
            path.display()
        )))
    }
}

impl Embedder {
    /// Loads the model from `dir`, checking the pinned hashes first.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let weights = file(dir, "model.safetensors")?;
        let tok = file(dir, "tokenizer.json")?;
        let cfg = file(dir, "config.json")?;
        check_sha(&weights, WEIGHTS_SHA256)?;
        check_sha(&tok, TOKENIZER_SHA256)?;
        // the shape of the model (layers, heads, norm epsilon) changes every vector too
        check_sha(&cfg, CONFIG_SHA256)?;
        let cfg: BertConfig =
            serde_json::from_slice(&std::fs::read(cfg).map_err(load_err)?).map_err(load_err)?;
        let bytes = std::fs::read(&weights).map_err(load_err)?;
        let single = single::Single::load(&bytes, &cfg).map_err(EmbedError::Load)?;
        drop(bytes);
        let mut tokenizer = Tokenizer::from_file(&tok).map_err(load_err)?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(single.max_positions()),
                ..Default::default()
            }))
            .map_err(load_err)?;
        Ok(Self { single, tokenizer })
    }

    fn ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self.tokenizer.encode(text, true).map_err(run_err)?;
        Ok(enc.get_ids().to_vec())
    }

    /// One text's vector (unit length, [`DIM`] wide): the mean of the last hidden states of
    /// its first [`MAX_TOKENS`] tokens.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.vector(&self.ids(text)?)
    }

    /// The vector of an encoding; `Run` for one the pass refuses (empty, too long, an id
    /// outside the vocabulary), which the tokenizer does not produce.
    fn vector(&self, ids: &[u32]) -> Result<Vec<f32>, EmbedError> {
        self.single
            .embed(ids)
            .ok_or_else(|| EmbedError::Run("no vector returned".into()))
    }

    /// A query's vector: what [`Embedder::embed_one`] gives for its first [`QUERY_TOKENS`]
    /// tokens (the closing `[SEP]` kept), so a query's cost is bounded whatever its length.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut ids = self.ids(text.trim())?;
        cut_tokens(&mut ids, QUERY_TOKENS);
        self.vector(&ids)
    }

    /// Vectors of many texts, in order, [`Embedder::embed_one`] each, one text after
    /// another: each text's wide products already take both of rayon's threads, and a
    /// query's products, queued behind a whole batch of texts spread over rayon's threads,
    /// would wait for all of it (an index build of thousands of tools would hold up every
    /// other org's search).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }
}

/// Cuts `ids` (an encoding ending in `[SEP]`) to `max` tokens, keeping its last one.
fn cut_tokens(ids: &mut Vec<u32>, max: usize) {
    if ids.len() > max && max >= 2 {
        let last = ids[ids.len() - 1];
        ids.truncate(max - 1);
        ids.push(last);
    }
}

/// The model of `dir`, loaded once per process and directory and shared (every
/// `Runtime` of a process, the tests' many apps included, uses one copy of the weights);
/// a failure is kept too, so a missing model is looked for once.
pub fn shared(dir: &Path) -> Result<std::sync::Arc<Embedder>, String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Loaded = Result<Arc<Embedder>, String>;
    static MODELS: OnceLock<Mutex<HashMap<PathBuf, Loaded>>> = OnceLock::new();
    let mut models = MODELS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    models
        .entry(dir.to_path_buf())
        .or_insert_with(|| Embedder::load(dir).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    /// The model as `scripts/setup-model` puts it (or `LOOPGATE_EMBEDDING_MODEL_DIR`);
    /// missing, the test fails (the server crate's rule for missing services), unless
    /// `LOOPGATE_TEST_ALLOW_MISSING_SERVICES=1`.
    fn model_dir() -> PathBuf {
        match std::env::var("LOOPGATE_EMBEDDING_MODEL_DIR") {
            Ok(d) if !d.is_empty() => PathBuf::from(d),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.data/models/all-minilm-l6-v2"),
        }
    }

    fn model() -> Option<std::sync::Arc<Embedder>> {
        match shared(&model_dir()) {
            Ok(e) => Some(e),
            Err(e) => {
                let allowed =
                    std::env::var("LOOPGATE_TEST_ALLOW_MISSING_SERVICES").is_ok_and(|v| v == "1");
                assert!(
                    allowed,
                    "the embedding model ({e}): run scripts/setup-model"
                );
                None
            }
        }
    }

    /// The evaluation set's requests (`tests/fixtures/discovery`).
    fn requests() -> Vec<String> {
        let reqs: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/discovery/requests.json"
        ))
        .unwrap_or_default();
        reqs["requests"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["request"].as_str().map(str::to_string))
            .collect()
    }

    /// `candle`'s implementation of the model (`bert.rs`), loaded from the same files.
    fn reference() -> Option<bert::Bert> {
        use candle_core::{DType, Device};
        let dir = model_dir();
        let cfg: BertConfig =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).ok()?).ok()?;
        let bytes = std::fs::read(dir.join("model.safetensors")).ok()?;
        let vb = candle_nn::VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .expect("the weights in candle");
        Some(bert::Bert::load(vb, &cfg).expect("candle's model"))
    }

    /// D5: the forward pass ([`single`]) gives `candle`'s vectors (padded batches of 16 on
    /// candle's matrix products) for every request and a seventh of the tool texts of the
    /// evaluation set: cosine at least 0.9999 each, over sequences of 3 to 128 tokens.
    #[test]
    fn d5_the_forward_pass_agrees_with_candles() {
        let Some(embedder) = model() else { return };
        let reference = reference().expect("the model's files, read by model()");
        let kits: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/discovery/toolkits.json"
        ))
        .unwrap_or_default();
        let mut texts = requests();
        texts.push("hi".into());
        texts.push(["draft a reply to the last message from the landlord"; 12].join(" and "));
        for kit in kits["toolkits"].as_array().into_iter().flatten() {
            for t in kit["tools"].as_array().into_iter().flatten().step_by(7) {
                texts.push(format!("{}: {}", t["name"], t["description"]));
            }
        }
        assert!(texts.len() > 250, "the evaluation set is read");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let ours = embedder.embed(&refs).expect("vectors");
        let (mut shortest, mut longest, mut worst) = (usize::MAX, 0, 1f32);
        for (chunk, mine) in texts.chunks(16).zip(ours.chunks(16)) {
            let ids: Vec<Vec<u32>> = chunk
                .iter()
                .map(|t| embedder.ids(t).expect("tokens"))
                .collect();
            let theirs = reference.embed(&ids).expect("candle's vectors");
            for ((a, b), i) in theirs.iter().zip(mine).zip(&ids) {
                let cos: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
                (shortest, longest, worst) =
                    (shortest.min(i.len()), longest.max(i.len()), worst.min(cos));
            }
        }
        eprintln!("D5 forward pass against candle's: worst cosine {worst}");
        assert!(worst >= 0.9999, "worst cosine {worst}");
        assert!(
            longest == MAX_TOKENS && shortest < 8,
            "{shortest}..{longest} tokens"
        );
        assert!(embedder.single.embed(&[]).is_none());
        assert!(embedder.single.embed(&[101, u32::MAX, 102]).is_none());
    }

    /// Side by side in one run: a query's vector by the forward pass ([`single`], what the
    /// runtime uses) and by `candle`'s (what it used before), over the 231 evaluation
    /// requests, p50 and the ratio. A measurement, not a check:
    /// `cargo test -p loopgate-embedding --release -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement: run by hand"]
    fn measure_a_query_against_candles_pass() {
        let Some(embedder) = model() else { return };
        let reference = reference().expect("the model's files, read by model()");
        let ids: Vec<Vec<u32>> = requests()
            .iter()
            .map(|q| embedder.ids(q).expect("tokens"))
            .collect();
        let p50 = |f: &dyn Fn(&Vec<u32>)| {
            let mut ms: Vec<f64> = (0..3)
                .flat_map(|_| ids.iter())
                .map(|i| {
                    let t = std::time::Instant::now();
                    f(i);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            ms.sort_by(f64::total_cmp);
            ms[ms.len() / 2]
        };
        let ours = p50(&|i| {
            std::hint::black_box(embedder.single.embed(i));
        });
        let theirs = p50(&|i| {
            std::hint::black_box(reference.embed(std::slice::from_ref(i)).ok());
        });
        let tokens = ids.iter().map(Vec::len).sum::<usize>() as f64 / ids.len() as f64;
        eprintln!(
            "a query ({} requests, {tokens:.1} tokens on average): forward pass p50 {ours:.2} ms, candle's {theirs:.2} ms ({:.1}x)",
            ids.len(),
            theirs / ours
        );
    }

    #[test]
    fn a_long_query_is_cut_keeping_its_closing_token() {
        let mut ids: Vec<u32> = (0..QUERY_TOKENS as u32 + 8).collect();
        let last = *ids.last().unwrap();
        cut_tokens(&mut ids, QUERY_TOKENS);
        assert_eq!(ids.len(), QUERY_TOKENS);
        let n = QUERY_TOKENS;
        assert_eq!(
            (ids[0], ids[n - 2], ids[n - 1]),
            (0, n as u32 - 2, last),
            "the first tokens, then the closing one"
        );
        let mut short = vec![101, 7, 102];
        cut_tokens(&mut short, QUERY_TOKENS);
        assert_eq!(short, [101, 7, 102]);
    }
}
