//! D5, D6: the evaluation sets `search_tools` is scored on, loaded once per test process.
//!
//! - `synthetic`: `tests/fixtures/discovery` — 311 hand-written tools in eight toolkits
//!   and 231 person-worded requests.
//! - `real`: the real public API descriptions `scripts/setup-toolkits` fetches into
//!   `.data/toolkits` (GitHub's and six more products', 3,044 operations), imported through
//!   [`crate::openapi_import`] as the service imports them, with the requests of
//!   `tests/fixtures/discovery/real/requests.json` (half worded as people ask, half as
//!   agents search), each naming its expected tool as `toolkit METHOD path`.
//!
//! Both are split into dev and test halves by the SHA-256 of the request. Tool vectors
//! are the service's (the same document text, the same model), cached on disk by the
//! SHA-256 of the model id and every text (`.data/cache`), so a rerun does not embed
//! 3,000 tools again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::discovery::hybrid::{tool_text, Candidates, Fusion};
use crate::discovery::{DenseIndex, HybridIndex, SearchIndex, ToolDoc, ToolSource, ToolText};
use crate::embedding::{Embedder, DIM, MODEL_ID};

pub fn model_dir() -> PathBuf {
    match std::env::var("LOOPGATE_EMBEDDING_MODEL_DIR") {
        Ok(d) if !d.is_empty() => PathBuf::from(d),
        _ => root().join(".data/models/all-minilm-l6-v2"),
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `dev` or `test`: the first byte of the request's SHA-256, even or odd.
pub fn split_of(request: &str) -> &'static str {
    if Sha256::digest(request.as_bytes())[0] % 2 == 0 {
        "dev"
    } else {
        "test"
    }
}

/// One request: its words, style, half, and the tools that answer it.
pub struct Req {
    pub request: String,
    /// `person` or `agent`
    pub style: String,
    pub split: &'static str,
    pub expected: Vec<usize>,
    pub vector: Vec<f32>,
}

/// One set: its tools (name and toolkit), index and requests.
pub struct EvalSet {
    pub label: &'static str,
    pub names: Vec<String>,
    /// Each tool's description as `search_tools` shows it.
    pub short: Vec<String>,
    pub toolkits: Vec<String>,
    pub index: HybridIndex,
    pub requests: Vec<Req>,
}

/// The ranking a score is taken of.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Mode {
    Lexical,
    Dense,
    Hybrid(Fusion),
    /// Words fused with the action and toolkit matches, no vectors.
    Words(Fusion),
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Score {
    pub n: usize,
    pub top1: usize,
    pub top5: usize,
    pub top10: usize,
    pub rr: f64,
}

impl Score {
    pub fn add(&mut self, ranked: &[usize], expected: &[usize]) {
        self.n += 1;
        if let Some(p) = ranked.iter().position(|d| expected.contains(d)) {
            self.top1 += usize::from(p == 0);
            self.top5 += usize::from(p < 5);
            self.top10 += usize::from(p < 10);
            self.rr += 1.0 / (p as f64 + 1.0);
        }
    }
    pub fn r1(&self) -> f64 {
        self.top1 as f64 / self.n.max(1) as f64
    }
    pub fn r5(&self) -> f64 {
        self.top5 as f64 / self.n.max(1) as f64
    }
    pub fn r10(&self) -> f64 {
        self.top10 as f64 / self.n.max(1) as f64
    }
    /// Over the first 10 results.
    pub fn mrr(&self) -> f64 {
        self.rr / self.n.max(1) as f64
    }
    /// What fitting maximises: recall@5 first, then top-1 and MRR.
    pub fn objective(&self) -> f64 {
        self.top5 as f64 + 0.5 * self.top1 as f64 + 0.5 * self.rr
    }
    pub fn line(&self) -> String {
        format!(
            "{:3} requests: top-1 {:5.1}%, recall@5 {:5.1}%, recall@10 {:5.1}%, MRR {:.3}",
            self.n,
            self.r1() * 100.0,
            self.r5() * 100.0,
            self.r10() * 100.0,
            self.mrr()
        )
    }
}

impl EvalSet {
    /// Each request's candidates under `f` (the fusion's weights are then free to vary
    /// without searching again), for the requests `keep` accepts.
    pub fn candidates(&self, f: &Fusion, keep: &dyn Fn(&Req) -> bool) -> Vec<(usize, Candidates)> {
        self.requests
            .iter()
            .enumerate()
            .filter(|(_, r)| keep(r))
            .map(|(i, r)| {
                (
                    i,
                    self.index.candidates(&r.request, Some(&r.vector), None, f),
                )
            })
            .collect()
    }

    /// `base` with its lexical candidates found again under `f`'s field weights (the dense
    /// ones do not depend on them).
    pub fn relex(&self, base: &[(usize, Candidates)], f: &Fusion) -> Vec<(usize, Candidates)> {
        base.iter()
            .map(|(i, c)| {
                let r = &self.requests[*i];
                let lex = self.index.candidates(&r.request, None, None, f);
                (
                    *i,
                    Candidates {
                        lexical: lex.lexical,
                        ..c.clone()
                    },
                )
            })
            .collect()
    }

    /// The score of precomputed candidates fused by `f`.
    pub fn score_fused(&self, cands: &[(usize, Candidates)], f: &Fusion) -> Score {
        let mut s = Score::default();
        for (i, c) in cands {
            s.add(&self.index.fuse(c, f, 10), &self.requests[*i].expected);
        }
        s
    }

    /// The first `k` tools for request `r` under `mode`.
    pub fn rank(&self, r: &Req, mode: Mode, k: usize) -> Vec<usize> {
        match mode {
            Mode::Lexical => self.index.lexical.search(&r.request, k),
            Mode::Dense => self
                .index
                .dense
                .as_ref()
                .map(|d| d.rank(&r.vector, k).into_iter().map(|x| x.0).collect())
                .unwrap_or_default(),
            Mode::Hybrid(f) => self
                .index
                .search_with(&r.request, Some(&r.vector), None, &f, k),
            Mode::Words(f) => self.index.search_with(&r.request, None, None, &f, k),
        }
    }

    /// The score of the requests `keep` accepts.
    pub fn score(&self, mode: Mode, keep: &dyn Fn(&Req) -> bool) -> Score {
        let mut s = Score::default();
        for r in self.requests.iter().filter(|r| keep(r)) {
            s.add(&self.rank(r, mode, 10), &r.expected);
        }
        s
    }
}

/// Both sets, or `None` (said once) when the model or the real descriptions are missing.
pub fn sets() -> Option<&'static [EvalSet; 2]> {
    static SETS: OnceLock<Option<[EvalSet; 2]>> = OnceLock::new();
    SETS.get_or_init(|| {
        let embedder = match crate::embedding::shared(&model_dir()) {
            Ok(e) => e,
            Err(e) => {
                crate::testing::missing(&format!("the embedding model ({e})"));
                return None;
            }
        };
        let real = match real_tools() {
            Ok(t) => t,
            Err(e) => {
                crate::testing::missing(&format!(
                    "the real API descriptions ({e}; run scripts/setup-toolkits)"
                ));
                return None;
            }
        };
        Some([synthetic(&embedder), real_set(&embedder, real)])
    })
    .as_ref()
}

#[derive(Deserialize)]
struct Toolkits {
    toolkits: Vec<Toolkit>,
}

#[derive(Deserialize)]
struct Toolkit {
    toolkit: String,
    tools: Vec<FixtureTool>,
}

#[derive(Deserialize)]
struct FixtureTool {
    name: String,
    description: String,
    input_schema: Value,
}

#[derive(Deserialize)]
struct Requests {
    requests: Vec<RawRequest>,
}

#[derive(Deserialize)]
struct RawRequest {
    request: String,
    #[serde(default = "person")]
    style: String,
    expected: Expected,
}

fn person() -> String {
    "person".into()
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Expected {
    One(String),
    Any(Vec<String>),
}

impl Expected {
    fn keys(&self) -> Vec<&str> {
        match self {
            Expected::One(k) => vec![k.as_str()],
            Expected::Any(ks) => ks.iter().map(String::as_str).collect(),
        }
    }
}

fn synthetic(embedder: &Embedder) -> EvalSet {
    let kits: Toolkits =
        serde_json::from_str(include_str!("../../tests/fixtures/discovery/toolkits.json"))
            .expect("toolkits fixture");
    let mut names = Vec::new();
    let mut toolkits = Vec::new();
    let mut docs = Vec::new();
    for k in &kits.toolkits {
        for t in &k.tools {
            let text = ToolText {
                name: &t.name,
                description: &t.description,
                toolkit: &k.toolkit,
                input_schema: &t.input_schema,
            };
            docs.push(text.doc());
            names.push(t.name.clone());
            toolkits.push(k.toolkit.clone());
        }
    }
    let set: Requests =
        serde_json::from_str(include_str!("../../tests/fixtures/discovery/requests.json"))
            .expect("requests fixture");
    let keys = names.clone();
    let at: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    build("synthetic", embedder, names, toolkits, docs, set, &at)
}

/// A real toolkit's tools as imported: (toolkit, imported tools).
type RealTools = Vec<(String, Vec<crate::openapi_import::ImportedTool>)>;

fn real_tools() -> Result<RealTools, String> {
    let dir = root().join(".data/toolkits");
    let manifest = std::fs::read(dir.join("manifest.json")).map_err(|e| e.to_string())?;
    let manifest: Vec<Value> = serde_json::from_slice(&manifest).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for m in manifest {
        let kit = m["toolkit"]
            .as_str()
            .ok_or("a manifest row without toolkit")?;
        let file = m["file"].as_str().ok_or("a manifest row without file")?;
        let bytes = std::fs::read(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
        let tools = crate::openapi_import::import(&bytes).map_err(|e| format!("{file}: {e}"))?;
        out.push((kit.to_string(), tools));
    }
    Ok(out)
}

fn real_set(embedder: &Embedder, real: RealTools) -> EvalSet {
    let mut names = Vec::new();
    let mut toolkits = Vec::new();
    let mut docs = Vec::new();
    let mut keys = Vec::new();
    for (kit, tools) in &real {
        for t in tools {
            docs.push(ToolDoc::build(&ToolSource {
                name: &t.name,
                description: &t.description,
                method: &t.method,
                path: &t.path,
                input_schema: &t.input_schema,
                toolkit: kit,
                provider: kit,
                mcp: false,
            }));
            names.push(format!("{kit}:{}", t.name));
            toolkits.push(kit.clone());
            keys.push(format!("{kit} {} {}", t.method, t.path));
        }
    }
    let set: Requests = serde_json::from_str(include_str!(
        "../../tests/fixtures/discovery/real/requests.json"
    ))
    .expect("real requests fixture");
    let at: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    build("real", embedder, names, toolkits, docs, set, &at)
}

fn build(
    label: &'static str,
    embedder: &Embedder,
    names: Vec<String>,
    toolkits: Vec<String>,
    docs: Vec<ToolDoc>,
    set: Requests,
    at: &HashMap<&str, usize>,
) -> EvalSet {
    let texts: Vec<String> = docs.iter().map(tool_text).collect();
    let short = docs
        .iter()
        .map(|d| {
            crate::discovery::short_description(
                &d.parts[crate::discovery::document::Field::Description as usize],
                200,
            )
        })
        .collect();
    let vectors = cached_vectors(label, embedder, &texts);
    let rows: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
    let index = HybridIndex {
        lexical: SearchIndex::from_docs(&docs),
        dense: Some(DenseIndex::new(DIM, &rows)),
        labels: toolkits.iter().map(|k| k.to_lowercase()).collect(),
    };
    let requests = set
        .requests
        .into_iter()
        .map(|r| {
            let expected = r
                .expected
                .keys()
                .iter()
                .map(|k| {
                    *at.get(k)
                        .unwrap_or_else(|| panic!("{label}: unknown expected tool {k}"))
                })
                .collect();
            // as the runtime embeds a request (`call::offered_tools`)
            let vector = embedder
                .embed_query(&r.request)
                .expect("a request's vector");
            Req {
                split: split_of(&r.request),
                request: r.request,
                style: r.style,
                expected,
                vector,
            }
        })
        .collect();
    EvalSet {
        label,
        names,
        short,
        toolkits,
        index,
        requests,
    }
}

/// The vectors of `texts`, read from `.data/cache` when this model embedded exactly
/// these texts before, else computed and written there.
fn cached_vectors(label: &str, embedder: &Embedder, texts: &[String]) -> Vec<Vec<f32>> {
    let mut h = Sha256::new();
    h.update(MODEL_ID.as_bytes());
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    let key: String = h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = root().join(format!(".data/cache/search-eval-{label}-{key}.f32"));
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == texts.len() * DIM * 4 {
            return bytes
                .chunks_exact(DIM * 4)
                .map(|row| {
                    row.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect()
                })
                .collect();
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors: Vec<Vec<f32>> = refs
        .chunks(64)
        .flat_map(|c| embedder.embed(c).expect("tool vectors"))
        .collect();
    let bytes: Vec<u8> = vectors
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = path.with_extension("part");
    if std::fs::write(&tmp, &bytes).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
    vectors
}
