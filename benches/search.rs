//! D5: `search_tools`' CPU per query over pools of 60, 600, 3,000 and 5,000 tools, the
//! query's embedding included (all-minilm-l6-v2 on CPU, `crates/embedding`), against the
//! pool index as the runtime keeps it (built once per agent and pool version); and the
//! memory that index holds per 1,000 tools. Pools larger than the evaluation set's 311
//! tools repeat its toolkits under other names (`<tool>_<n>`, toolkit `<kit><n>`),
//! sharing the base tool's vector: a vector is computed once per text and model, so its
//! content does not change what a query costs. Queries are the 231 evaluation requests:
//! a new query is embedded (its first 32 tokens, as the runtime does); a query asked again
//! takes its vector from the org's recent query vectors (`call::query_vectors`), as the
//! runtime does, and costs the search alone. Needs the model
//! (`scripts/setup-model`), no services:
//!
//! ```text
//! cargo bench --bench search
//! ```

#![allow(clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use loopgate::call::query_vectors::{query_key, QueryVectors};
use loopgate::discovery::hybrid::tool_text;
use loopgate::discovery::search::AnalysedDoc;
use loopgate::discovery::{DenseIndex, HybridIndex, SearchIndex, ToolText};
use loopgate::embedding::{Embedder, DIM};
use loopgate_engine::testing::{Counting, Mark};
use serde_json::Value;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

struct Tool {
    name: String,
    description: String,
    toolkit: String,
    schema: Value,
    base: usize,
}

fn fixture() -> (Vec<Tool>, Vec<String>) {
    let kits: Value =
        serde_json::from_str(include_str!("../tests/fixtures/discovery/toolkits.json"))
            .expect("toolkits");
    let mut tools = Vec::new();
    for k in kits["toolkits"].as_array().expect("a list") {
        for t in k["tools"].as_array().expect("a list") {
            tools.push(Tool {
                name: t["name"].as_str().expect("a name").to_string(),
                description: t["description"].as_str().expect("text").to_string(),
                toolkit: k["toolkit"].as_str().expect("a kit").to_string(),
                schema: t["input_schema"].clone(),
                base: tools.len(),
            });
        }
    }
    let reqs: Value =
        serde_json::from_str(include_str!("../tests/fixtures/discovery/requests.json"))
            .expect("requests");
    let queries = reqs["requests"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r["request"].as_str().expect("text").to_string())
        .collect();
    (tools, queries)
}

fn pool(base: &[Tool], n: usize) -> Vec<Tool> {
    (0..n)
        .map(|i| {
            let b = &base[i % base.len()];
            let copy = i / base.len();
            let suffix = |s: &str| {
                if copy == 0 {
                    s.to_string()
                } else {
                    format!("{s}{copy}")
                }
            };
            Tool {
                name: if copy == 0 {
                    b.name.clone()
                } else {
                    format!("{}_{copy}", b.name)
                },
                description: b.description.clone(),
                toolkit: suffix(&b.toolkit),
                schema: b.schema.clone(),
                base: b.base,
            }
        })
        .collect()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let dir = std::env::var("LOOPGATE_EMBEDDING_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".data/models/all-minilm-l6-v2")
        });
    let embedder = Embedder::load(&dir).expect("the model: run scripts/setup-model");
    let (base, queries) = fixture();
    let texts: Vec<String> = base
        .iter()
        .map(|t| {
            tool_text(
                &ToolText {
                    name: &t.name,
                    description: &t.description,
                    toolkit: &t.toolkit,
                    input_schema: &t.schema,
                }
                .doc(),
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let vectors = embedder.embed(&refs).expect("tool vectors");
    let embed_s = t0.elapsed().as_secs_f64();
    println!(
        "tool vectors: {} tools embedded in {:.2} s ({:.2} ms per tool)",
        base.len(),
        embed_s,
        embed_s * 1e3 / base.len() as f64
    );
    // the query's embedding alone
    let mut q_ms: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            std::hint::black_box(embedder.embed_query(q).expect("a vector"));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    q_ms.sort_by(f64::total_cmp);
    println!(
        "query embedding alone: p50 {:.2} ms, p95 {:.2} ms ({} queries)",
        pct(&q_ms, 0.5),
        pct(&q_ms, 0.95),
        q_ms.len()
    );
    println!("| pooled tools | new query p50 (embedding included) | p95 | query asked again p50 | p95 | lexical only p50 | documents analysed (once per tool version) | index merged (a new agent's first search) | memory (documents and index) | per 1,000 tools |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    // `cargo test --all-targets` runs this once as a smoke test (no `--bench`): the
    // smallest pool only; `cargo bench --bench search` measures every size
    let sizes: &[usize] = if std::env::args().any(|a| a == "--bench") {
        &[60, 600, 3000, 5000]
    } else {
        &[60]
    };
    for &n in sizes {
        let tools = pool(&base, n);
        let mark = Mark::now();
        let t = Instant::now();
        let tt: Vec<ToolText<'_>> = tools
            .iter()
            .map(|t| ToolText {
                name: &t.name,
                description: &t.description,
                toolkit: &t.toolkit,
                input_schema: &t.schema,
            })
            .collect();
        // what the runtime keeps per tool version (`call::search_docs`): analysed once
        let analysed: Vec<Arc<AnalysedDoc>> = tt
            .iter()
            .map(|t| Arc::new(AnalysedDoc::new(&t.doc())))
            .collect();
        let analyse_ms = t.elapsed().as_secs_f64() * 1e3;
        // a new agent's first search over tools this replica has seen: the merge
        let t = Instant::now();
        let rows: Vec<&[f32]> = tools.iter().map(|t| vectors[t.base].as_slice()).collect();
        let index = HybridIndex {
            lexical: SearchIndex::from_analysed(analysed.clone()),
            dense: Some(DenseIndex::new(DIM, &rows)),
            labels: tools.iter().map(|t| t.toolkit.to_lowercase()).collect(),
        };
        drop(rows);
        drop(tt);
        let build_ms = t.elapsed().as_secs_f64() * 1e3;
        let bytes = mark.usage().kept.max(0) as f64;
        let mut ms = Vec::new();
        let mut again_ms = Vec::new();
        let mut lex_ms = Vec::new();
        let kept = QueryVectors::default();
        for round in 0..3 {
            for q in &queries {
                let t = Instant::now();
                let qv = embedder.embed_query(q).expect("a vector");
                std::hint::black_box(index.search(q, Some(&qv), None, 10));
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                if round == 0 {
                    kept.put("org_bench", query_key(q), qv.into());
                }
                let t = Instant::now();
                let qv = kept.get("org_bench", &query_key(q)).expect("kept");
                std::hint::black_box(index.search(q, Some(&qv), None, 10));
                again_ms.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                std::hint::black_box(index.search(q, None, None, 10));
                lex_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        ms.sort_by(f64::total_cmp);
        again_ms.sort_by(f64::total_cmp);
        lex_ms.sort_by(f64::total_cmp);
        println!(
            "| {n} | {:.2} ms | {:.2} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.1} ms | {:.1} ms | {:.2} MiB | {:.2} MiB |",
            pct(&ms, 0.5),
            pct(&ms, 0.95),
            pct(&again_ms, 0.5),
            pct(&again_ms, 0.95),
            pct(&lex_ms, 0.5),
            analyse_ms,
            build_ms,
            bytes / (1 << 20) as f64,
            bytes / (1 << 20) as f64 * 1000.0 / n as f64
        );
        drop(index);
        drop(analysed);
    }
}
