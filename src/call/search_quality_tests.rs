//! D5: search quality on the evaluation set of `tests/fixtures/discovery` (311 tools in
//! eight toolkits searched together, 231 requests written before any tuning, split by
//! hash into dev and test halves; the files say how they were written). Top-1, top-3
//! and MRR for lexical (BM25F), dense (all-minilm-l6-v2) and hybrid, for both halves,
//! printed (`cargo test -p loopgate --lib search_quality -- --nocapture`), with a line
//! saying when hybrid is below the targets on the test half (top-3 >= 90 %,
//! top-1 >= 70 %: not met yet, see docs/performance.md); asserted: hybrid's MRR is at
//! least lexical's and dense's on the test half.
//!
//! The model is needed (`scripts/setup-model`, run by `scripts/test`): missing, the tests
//! fail, unless `LOOPGATE_TEST_ALLOW_MISSING_SERVICES=1`.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::discovery::hybrid::{tool_text, Fusion, FUSION};
use crate::discovery::{DenseIndex, HybridIndex, SearchIndex, ToolText};
use crate::embedding::DIM;

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
    requests: Vec<Request>,
}

#[derive(Deserialize)]
struct Request {
    request: String,
    expected: String,
    split: String,
}

fn model_dir() -> PathBuf {
    match std::env::var("LOOPGATE_EMBEDDING_MODEL_DIR") {
        Ok(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".data/models/all-minilm-l6-v2"),
    }
}

/// Everything the tests share, built once: the tools, the index, every request's vector.
struct Eval {
    names: Vec<String>,
    index: HybridIndex,
    requests: Vec<(Request, usize, Vec<f32>)>,
}

fn eval() -> Option<&'static Eval> {
    static EVAL: OnceLock<Option<Eval>> = OnceLock::new();
    EVAL.get_or_init(|| {
        let dir = model_dir();
        let embedder = match crate::embedding::shared(&dir) {
            Ok(e) => e,
            Err(e) => {
                crate::testing::missing(&format!("the embedding model ({e})"));
                return None;
            }
        };
        let kits: Toolkits =
            serde_json::from_str(include_str!("../../tests/fixtures/discovery/toolkits.json"))
                .expect("toolkits fixture");
        let texts: Vec<ToolText<'_>> = kits
            .toolkits
            .iter()
            .flat_map(|k| {
                k.tools.iter().map(|t| ToolText {
                    name: &t.name,
                    description: &t.description,
                    toolkit: &k.toolkit,
                    input_schema: &t.input_schema,
                })
            })
            .collect();
        let docs: Vec<String> = texts.iter().map(tool_text).collect();
        let doc_refs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&doc_refs).expect("tool vectors");
        let rows: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
        let index = HybridIndex {
            lexical: SearchIndex::build(&texts),
            dense: Some(DenseIndex::new(DIM, &rows)),
        };
        let names: Vec<String> = texts.iter().map(|t| t.name.to_string()).collect();
        let set: Requests =
            serde_json::from_str(include_str!("../../tests/fixtures/discovery/requests.json"))
                .expect("requests fixture");
        // as the runtime embeds a request (`call::offered_tools`)
        let qvecs: Vec<Vec<f32>> = set
            .requests
            .iter()
            .map(|r| {
                embedder
                    .embed_query(&r.request)
                    .expect("a request's vector")
            })
            .collect();
        let requests = set
            .requests
            .into_iter()
            .zip(qvecs)
            .map(|(r, v)| {
                let at = names
                    .iter()
                    .position(|n| *n == r.expected)
                    .unwrap_or_else(|| panic!("unknown expected tool {}", r.expected));
                (r, at, v)
            })
            .collect();
        Some(Eval {
            names,
            index,
            requests,
        })
    })
    .as_ref()
}

#[derive(Debug, Default, Clone, Copy)]
struct Score {
    n: usize,
    top1: usize,
    top3: usize,
    rr: f64,
}

impl Score {
    fn add(&mut self, ranked: &[usize], expected: usize) {
        self.n += 1;
        if let Some(p) = ranked.iter().position(|&d| d == expected) {
            self.top1 += usize::from(p == 0);
            self.top3 += usize::from(p < 3);
            self.rr += 1.0 / (p as f64 + 1.0);
        }
    }
    fn r1(&self) -> f64 {
        self.top1 as f64 / self.n.max(1) as f64
    }
    fn r3(&self) -> f64 {
        self.top3 as f64 / self.n.max(1) as f64
    }
    fn mrr(&self) -> f64 {
        self.rr / self.n.max(1) as f64
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Lexical,
    Dense,
    Hybrid(Fusion),
}

/// MRR is computed over the first 10 results.
fn score(e: &Eval, split: &str, mode: Mode) -> Score {
    let mut s = Score::default();
    for (r, expected, qv) in e.requests.iter().filter(|(r, _, _)| r.split == split) {
        let ranked = match mode {
            Mode::Lexical => e.index.search_with(&r.request, None, &FUSION, 10),
            Mode::Dense => e
                .index
                .dense
                .as_ref()
                .map(|d| d.rank(qv, 10).into_iter().map(|x| x.0).collect())
                .unwrap_or_default(),
            Mode::Hybrid(f) => e.index.search_with(&r.request, Some(qv), &f, 10),
        };
        s.add(&ranked, *expected);
    }
    s
}

#[test]
fn d5_requests_are_split_by_their_hash() {
    let set: Requests =
        serde_json::from_str(include_str!("../../tests/fixtures/discovery/requests.json"))
            .expect("requests fixture");
    assert!(set.requests.len() >= 200);
    for r in &set.requests {
        let h = Sha256::digest(r.request.as_bytes())[0];
        let want = if h % 2 == 0 { "dev" } else { "test" };
        assert_eq!(r.split, want, "{:?}", r.request);
    }
}

#[test]
fn d5_hybrid_search_meets_its_targets_on_the_test_half() {
    let Some(e) = eval() else { return };
    assert!(e.names.len() >= 300, "{} tools", e.names.len());
    for split in ["dev", "test"] {
        for (label, mode) in [
            ("lexical", Mode::Lexical),
            ("dense", Mode::Dense),
            ("hybrid", Mode::Hybrid(FUSION)),
        ] {
            let s = score(e, split, mode);
            eprintln!(
                "D5 {split:4} {label:7}: {} requests over {} tools: top-1 {:.1}%, top-3 {:.1}%, MRR {:.3}",
                s.n,
                e.names.len(),
                s.r1() * 100.0,
                s.r3() * 100.0,
                s.mrr()
            );
        }
    }
    let mut misses = 0;
    for (r, expected, qv) in e.requests.iter().filter(|(r, _, _)| r.split == "test") {
        let ranked = e.index.search(&r.request, Some(qv), 3);
        if ranked.first() != Some(expected) {
            misses += 1;
            let got: Vec<&str> = ranked.iter().map(|&i| e.names[i].as_str()).collect();
            eprintln!(
                "  test miss@1 {:?}: expected {}, got {got:?}",
                r.request, r.expected
            );
        }
    }
    let s = score(e, "test", Mode::Hybrid(FUSION));
    assert_eq!(s.n - s.top1, misses);
    let (lex, dense) = (
        score(e, "test", Mode::Lexical),
        score(e, "test", Mode::Dense),
    );
    // the targets are not met yet (see docs/performance.md): they are reported,
    // and what is asserted is that fusing helps on requests no tuning read
    if s.r3() < TARGET_TOP3 || s.r1() < TARGET_TOP1 {
        eprintln!(
            "D5 BELOW TARGET on the test half: hybrid top-1 {:.1}% (target {:.0}%), top-3 {:.1}% (target {:.0}%)",
            s.r1() * 100.0,
            TARGET_TOP1 * 100.0,
            s.r3() * 100.0,
            TARGET_TOP3 * 100.0
        );
    }
    assert!(
        s.mrr() >= lex.mrr() && s.mrr() >= dense.mrr(),
        "hybrid MRR {:.3} below lexical {:.3} or dense {:.3} on the test half",
        s.mrr(),
        lex.mrr(),
        dense.mrr()
    );
    assert!(
        s.top3 >= lex.top3,
        "hybrid finds fewer in its top 3 than lexical"
    );
}

/// The targets on the test half (D5).
const TARGET_TOP1: f64 = 0.7;
const TARGET_TOP3: f64 = 0.9;

/// The forward pass is the model's: the similarities of the model card's example
/// (sentence-transformers' reference: "That is a happy person" against "That is a very
/// happy person" 0.943, "That is a happy dog" 0.695, "Today is a sunny day" 0.257) come
/// out within 0.005; vectors are unit length; a batch and a single text agree.
#[test]
fn d5_embeddings_match_the_model_card_reference() {
    let dir = model_dir();
    let embedder = match crate::embedding::shared(&dir) {
        Ok(e) => e,
        Err(e) => return crate::testing::missing(&format!("the embedding model ({e})")),
    };
    let v = embedder
        .embed(&[
            "That is a happy person",
            "That is a very happy person",
            "That is a happy dog",
            "Today is a sunny day",
        ])
        .expect("vectors");
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let (para, related, other) = (cos(&v[0], &v[1]), cos(&v[0], &v[2]), cos(&v[0], &v[3]));
    eprintln!("D5 similarities: paraphrase {para:.3}, related {related:.3}, unrelated {other:.3}");
    assert!(
        para > related && related > other,
        "{para} {related} {other}"
    );
    assert!(para > 0.85 && other < 0.4, "{para} {other}");
    for x in &v {
        assert!((cos(x, x) - 1.0).abs() < 1e-4);
        assert_eq!(x.len(), DIM);
    }
    let one = embedder.embed_one("That is a happy dog").expect("a vector");
    assert!(cos(&one, &v[2]) > 0.9999, "a batch and a single text agree");
}

/// The fusion constants are the best of the grid on the dev half (by MRR, ties to the
/// earlier grid point); this test reads no test-half request.
#[test]
fn d5_fusion_constants_are_the_best_on_the_dev_half() {
    let Some(e) = eval() else { return };
    let mut best: Option<(f64, Fusion)> = None;
    for k in [5.0, 10.0, 20.0, 40.0, 60.0] {
        for dense in [0.5, 1.0, 1.5, 2.0, 3.0] {
            let f = Fusion {
                k,
                lexical: 1.0,
                dense,
                depth: FUSION.depth,
            };
            let m = score(e, "dev", Mode::Hybrid(f)).mrr();
            if best.is_none_or(|(b, _)| m > b + 1e-9) {
                best = Some((m, f));
            }
        }
    }
    let (m, f) = best.expect("a grid");
    let chosen = score(e, "dev", Mode::Hybrid(FUSION)).mrr();
    eprintln!("D5 dev grid best: {f:?} MRR {m:.4}; chosen {FUSION:?} MRR {chosen:.4}");
    assert!(
        chosen + 1e-9 >= m,
        "FUSION is not the dev half's best: {f:?} ({m:.4} > {chosen:.4})"
    );
}
