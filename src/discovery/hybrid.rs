//! D5: `search_tools` ranking by meaning as well as by words. Each pooled tool has a
//! sentence vector ([`tool_text`] embedded once per text and model, outside this
//! pure module); a request's vector ranks the tools by cosine similarity ([`DenseIndex`]),
//! and that ranking is fused with BM25F's ([`super::search`]) by weighted reciprocal
//! rank ([`fuse`]). The fusion's constants were chosen on the dev half of the evaluation
//! set (`tests/fixtures/discovery`) only; the test half scores them
//! (`discovery::quality_tests`).
//!
//! Without vectors (no model configured) the ranking is BM25F's alone.

use std::collections::HashMap;

use super::search::{SearchIndex, ToolText};
use super::text::words;

/// Weighted reciprocal-rank fusion: a tool at rank `r` (1-based) of a ranking adds
/// `weight / (K + r)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    pub k: f64,
    pub lexical: f64,
    pub dense: f64,
    /// Tools taken from each ranking before fusing (a bound on the work per query).
    pub depth: usize,
}

/// Chosen on the dev split (see `docs/performance.md`, "Search quality").
pub const FUSION: Fusion = Fusion {
    k: 5.0,
    lexical: 1.0,
    dense: 1.5,
    depth: 50,
};

/// What is embedded of a tool: its name as words, its toolkit and its description.
pub fn tool_text(t: &ToolText<'_>) -> String {
    let name = words(t.name).join(" ");
    let desc = t.description.trim();
    if t.toolkit.is_empty() {
        format!("{name}: {desc}")
    } else {
        format!("{name} ({}): {desc}", t.toolkit)
    }
}

/// Unit vectors of a fixed list of tools, row-major; results are indexes into that list.
#[derive(Debug, Clone, Default)]
pub struct DenseIndex {
    dim: usize,
    rows: Vec<f32>,
}

impl DenseIndex {
    /// `vectors[i]` is tool `i`'s; every vector must be `dim` wide (others count as zero).
    pub fn new(dim: usize, vectors: &[&[f32]]) -> Self {
        let mut rows = vec![0f32; dim * vectors.len()];
        for (i, v) in vectors.iter().enumerate() {
            if v.len() == dim {
                rows[i * dim..(i + 1) * dim].copy_from_slice(v);
            }
        }
        Self { dim, rows }
    }

    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the vectors.
    pub fn bytes(&self) -> usize {
        self.rows.len() * std::mem::size_of::<f32>()
    }

    /// Up to `limit` tools by cosine similarity to `query` (a unit vector), best first,
    /// with their similarity.
    pub fn rank(&self, query: &[f32], limit: usize) -> Vec<(usize, f32)> {
        if query.len() != self.dim || self.dim == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f32)> = self
            .rows
            .chunks_exact(self.dim)
            .map(|row| dot(row, query))
            .enumerate()
            .collect();
        let limit = limit.min(scored.len());
        if limit == 0 {
            return Vec::new();
        }
        let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if limit < scored.len() {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored
    }
}

/// `a · b` in eight independent partial sums, which the compiler keeps in vector
/// registers (a single running sum waits on every addition; at 5,000 tools that is most of
/// a query's search).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ac, ar) = a.as_chunks::<8>();
    let (bc, br) = b.as_chunks::<8>();
    for (x, y) in ac.iter().zip(bc) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Fuses two rankings (best first) into one, best first, at most `limit` long; ties go
/// to the lexical ranking's order, then to the lower index.
pub fn fuse(lexical: &[usize], dense: &[usize], f: &Fusion, limit: usize) -> Vec<usize> {
    let mut score: HashMap<usize, (f64, usize)> = HashMap::new();
    for (r, &d) in lexical.iter().take(f.depth).enumerate() {
        let e = score.entry(d).or_insert((0.0, r));
        e.0 += f.lexical / (f.k + r as f64 + 1.0);
    }
    for (r, &d) in dense.iter().take(f.depth).enumerate() {
        let e = score.entry(d).or_insert((0.0, usize::MAX));
        e.0 += f.dense / (f.k + r as f64 + 1.0);
    }
    let mut ranked: Vec<(usize, f64, usize)> =
        score.into_iter().map(|(d, (s, lr))| (d, s, lr)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(limit).map(|(d, _, _)| d).collect()
}

/// A pool's search index: BM25F over its tools, and their vectors when the model is
/// loaded. Built once per agent and pool version and shared by every call
/// (`call::offered_tools`).
#[derive(Debug, Default)]
pub struct HybridIndex {
    pub lexical: SearchIndex,
    pub dense: Option<DenseIndex>,
}

impl HybridIndex {
    /// Up to `limit` tools, best first. With a query vector and tool vectors the two
    /// rankings are fused; otherwise BM25F ranks alone (tools sharing no word with the
    /// query are then not returned).
    pub fn search(&self, query: &str, query_vector: Option<&[f32]>, limit: usize) -> Vec<usize> {
        self.search_with(query, query_vector, &FUSION, limit)
    }

    pub fn search_with(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        f: &Fusion,
        limit: usize,
    ) -> Vec<usize> {
        match (&self.dense, query_vector) {
            (Some(dense), Some(q)) => {
                let lex = self.lexical.search(query, f.depth);
                let den: Vec<usize> = dense.rank(q, f.depth).into_iter().map(|x| x.0).collect();
                fuse(&lex, &den, f, limit)
            }
            _ => self.lexical.search(query, limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dense_ranks_by_cosine_and_bounds_the_answer() {
        let a = [1.0f32, 0.0];
        let b = [0.6f32, 0.8];
        let c = [0.0f32, 1.0];
        let wrong = [1.0f32];
        let idx = DenseIndex::new(2, &[&a, &b, &c, &wrong]);
        assert_eq!(idx.len(), 4);
        let r = idx.rank(&[0.0, 1.0], 2);
        assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), [2, 1]);
        assert!(
            idx.rank(&[1.0, 0.0, 0.0], 3).is_empty(),
            "a query of another width"
        );
        assert!(idx.rank(&[1.0, 0.0], 0).is_empty());
        assert_eq!(idx.rank(&[1.0, 0.0], 10).len(), 4);
        assert!(DenseIndex::new(2, &[]).rank(&[1.0, 0.0], 3).is_empty());
    }

    #[test]
    fn the_dot_product_sums_every_lane_and_the_tail() {
        for n in [0usize, 1, 7, 8, 9, 16, 20, 384] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let want: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            let got = f64::from(dot(&a, &b));
            assert!((got - want).abs() < 1e-4, "{n} wide: {got} against {want}");
        }
    }

    #[test]
    fn fusion_favours_agreement_and_keeps_either_side() {
        let f = Fusion {
            k: 1.0,
            lexical: 1.0,
            dense: 1.0,
            depth: 10,
        };
        // 7 is second in both: beats 1 and 9, each first in one only
        assert_eq!(fuse(&[1, 7], &[9, 7], &f, 10)[0], 7);
        assert_eq!(fuse(&[], &[3, 4], &f, 10), [3, 4]);
        assert_eq!(fuse(&[5], &[], &f, 10), [5]);
        assert_eq!(fuse(&[1, 2, 3], &[3, 2, 1], &f, 2).len(), 2);
        let lex_only = Fusion { dense: 0.0, ..f };
        assert_eq!(fuse(&[1, 2], &[2, 9], &lex_only, 3)[..2], [1, 2]);
    }

    #[test]
    fn tool_text_reads_the_name_as_words() {
        let s = json!({});
        let t = ToolText {
            name: "users_getProfile",
            description: " Gets the profile. ",
            toolkit: "mail",
            input_schema: &s,
        };
        assert_eq!(tool_text(&t), "users get profile (mail): Gets the profile.");
    }
}
