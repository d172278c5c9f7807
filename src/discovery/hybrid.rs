//! D5: `search_tools` ranking by meaning as well as by words. Each pooled tool has a
//! sentence vector ([`tool_text`] embedded once per text and model, at import and sync,
//! outside this pure module); a request's vector ranks the tools by cosine similarity
//! ([`DenseIndex`]), and that ranking is fused with BM25F's ([`super::search`]), the
//! action match and the toolkit match by weighted scores ([`Fusion`]). The constants were
//! fitted on the dev halves of the evaluation sets only; the test halves score them
//! (`call::search_quality_tests`).
//!
//! Without vectors (no model configured) the ranking is BM25F's alone.

use std::collections::HashMap;

use super::search::{FieldWeights, Hit, SearchIndex, FIELD_WEIGHTS};
use super::text::{actions, rewrite_query, terms, words};
use super::ToolDoc;

/// How the rankings are combined. A candidate (one of the `depth` best of either ranking)
/// scores `lexical · bm25/best_bm25 + dense · (cos − worst)/(best − worst) + action ·
/// [it does what the request asks] + toolkit · [the request names its toolkit]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    pub lexical: f64,
    pub dense: f64,
    pub action: f64,
    pub toolkit: f64,
    /// Tools taken from each ranking before fusing (a bound on the work per query).
    pub depth: usize,
    pub fields: FieldWeights,
}

/// Fitted on the dev halves of the evaluation sets (coordinate ascent over these
/// constants and the field weights, `call::search_quality_tests`; see
/// `docs/performance.md`, "Search quality"); the test halves score it, never choose it.
/// With meaning fused in, the summary's and parameter names' words add nothing the
/// description and the vector do not already carry: their weights came out at zero.
pub const FUSION: Fusion = Fusion {
    lexical: 1.0,
    dense: 0.75,
    action: 0.3,
    toolkit: 0.5,
    depth: 100,
    fields: FieldWeights([
        // name, summary, description, path and tags, toolkit
        (0.5, 0.3),
        (0.0, 0.3),
        (1.0, 0.0),
        (1.0, 0.5),
        (0.6, 0.3),
        // action, parameter names, parameter text, response fields
        (0.0, 0.0),
        (0.0, 0.75),
        (0.4, 0.75),
        (0.3, 0.75),
    ]),
};

/// Words alone (no model, or a request that could not be embedded): the summary (or
/// the name) and the parameter names carry what the vector would have.
pub const WORDS_ONLY: Fusion = Fusion {
    dense: 0.0,
    fields: FIELD_WEIGHTS,
    ..FUSION
};

/// What is embedded of a tool: its toolkit, its summary (or name as words) and its
/// description — the words a request's meaning is compared with.
pub fn tool_text(d: &ToolDoc) -> String {
    use super::document::Field;
    let part = |f: Field| d.parts[f as usize].trim();
    let name = words(part(Field::Name)).join(" ");
    let summary = Some(part(Field::Summary))
        .filter(|s| *s != part(Field::Name))
        .unwrap_or("");
    let kit = part(Field::Toolkit);
    let mut out = String::new();
    if !kit.is_empty() {
        out.push_str(kit);
        out.push_str(": ");
    }
    if summary.is_empty() {
        out.push_str(&name);
    } else {
        out.push_str(summary);
        out.push_str(" (");
        out.push_str(&name);
        out.push(')');
    }
    let desc = part(Field::Description);
    if !desc.is_empty() && desc != summary {
        out.push_str(". ");
        out.push_str(desc);
    }
    out
}

/// Unit vectors of a fixed list of tools, row-major; results are indexes into that list.
#[derive(Debug, Clone, Default)]
pub struct DenseIndex {
    dim: usize,
    rows: Vec<f32>,
    /// Whether each tool has a vector (a missing one is all zero and never ranked).
    present: Vec<bool>,
}

impl DenseIndex {
    /// `vectors[i]` is tool `i`'s; every vector must be `dim` wide (others count as zero).
    pub fn new(dim: usize, vectors: &[&[f32]]) -> Self {
        let mut rows = vec![0f32; dim * vectors.len()];
        let mut present = vec![false; vectors.len()];
        for (i, v) in vectors.iter().enumerate() {
            if v.len() == dim && v.iter().any(|x| *x != 0.0) {
                rows[i * dim..(i + 1) * dim].copy_from_slice(v);
                present[i] = true;
            }
        }
        Self { dim, rows, present }
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
        self.rank_where(query, limit, &|_| true)
    }

    /// [`Self::rank`] among the tools `keep` accepts; a tool without a vector (all zero)
    /// is not ranked.
    pub fn rank_where(
        &self,
        query: &[f32],
        limit: usize,
        keep: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        if query.len() != self.dim || self.dim == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f32)> = self
            .rows
            .chunks_exact(self.dim)
            .map(|row| dot(row, query))
            .enumerate()
            .filter(|&(i, _)| self.present[i] && keep(i))
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

/// A pool's search index: BM25F over its tools' documents, their vectors when the model
/// is loaded (a tool whose vector is not computed yet ranks by words only), and each
/// tool's toolkit label for the `toolkit` filter. Built once per agent and pool version
/// and shared by every call (`call::offered_tools`).
#[derive(Debug, Default)]
pub struct HybridIndex {
    pub lexical: SearchIndex,
    pub dense: Option<DenseIndex>,
    /// Lower-case toolkit label of each tool (the toolkit, else the provider's name).
    pub labels: Vec<String>,
}

impl HybridIndex {
    /// Up to `limit` tools, best first, among those whose label is `toolkit` (any, when
    /// `None`). With a query vector and tool vectors meaning and words are fused;
    /// otherwise words rank alone (tools sharing no word with the request are then not
    /// returned).
    pub fn search(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        toolkit: Option<&str>,
        limit: usize,
    ) -> Vec<usize> {
        let f = match (&self.dense, query_vector) {
            (Some(_), Some(_)) => &FUSION,
            _ => &WORDS_ONLY,
        };
        self.search_with(query, query_vector, toolkit, f, limit)
    }

    pub fn search_with(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        toolkit: Option<&str>,
        f: &Fusion,
        limit: usize,
    ) -> Vec<usize> {
        let c = self.candidates(query, query_vector, toolkit, f);
        self.fuse(&c, f, limit)
    }

    /// The first step of a search: the `depth` best tools by words and by meaning, with
    /// what the fusion needs to know of the request.
    pub fn candidates(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        toolkit: Option<&str>,
        f: &Fusion,
    ) -> Candidates {
        let want = toolkit.map(str::to_lowercase);
        let keep = |d: usize| match &want {
            None => true,
            Some(k) => self.labels.get(d).is_some_and(|l| l == k),
        };
        let rewritten = rewrite_query(query);
        let mut lexical = self.lexical.scores(&rewritten, &f.fields, &keep);
        self.lexical.sort(&mut lexical);
        lexical.truncate(f.depth);
        let dense = match (&self.dense, query_vector) {
            (Some(dense), Some(q)) if f.dense > 0.0 => dense.rank_where(q, f.depth, &keep),
            _ => Vec::new(),
        };
        Candidates {
            lexical,
            dense,
            actions: actions(&rewritten),
            terms: terms(&rewritten),
        }
    }

    /// The second step: the candidates scored by `f` (its field weights are the
    /// candidates' own), best first, at most `limit`.
    pub fn fuse(&self, c: &Candidates, f: &Fusion, limit: usize) -> Vec<usize> {
        let best_lex = c.lexical.first().map_or(0.0, |h| h.score);
        let (hi, lo) = match (c.dense.first(), c.dense.last()) {
            (Some(a), Some(b)) => (f64::from(a.1), f64::from(b.1)),
            _ => (0.0, 0.0),
        };
        let mut score: HashMap<usize, f64> = HashMap::new();
        for h in &c.lexical {
            *score.entry(h.doc).or_default() +=
                f.lexical * h.score / best_lex.max(f64::MIN_POSITIVE);
        }
        if f.dense > 0.0 {
            for &(d, cos) in &c.dense {
                let norm = if hi > lo {
                    (f64::from(cos) - lo) / (hi - lo)
                } else {
                    1.0
                };
                *score.entry(d).or_default() += f.dense * norm;
            }
        }
        let mut ranked: Vec<Hit> = score
            .into_iter()
            .map(|(doc, mut s)| {
                if c.actions != 0 && self.lexical.actions_of(doc) & c.actions != 0 {
                    s += f.action;
                }
                if self.lexical.names_kit(doc, &c.terms) {
                    s += f.toolkit;
                }
                Hit { doc, score: s }
            })
            .collect();
        self.lexical.sort(&mut ranked);
        ranked.into_iter().take(limit).map(|h| h.doc).collect()
    }
}

/// A request's candidates: the best tools by words (BM25F) and by meaning (cosine), the
/// action classes it asks for and its terms (to match a toolkit's name).
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    pub lexical: Vec<Hit>,
    pub dense: Vec<(usize, f32)>,
    pub actions: u16,
    pub terms: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::ToolText;
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
        assert_eq!(
            idx.rank(&[1.0, 0.0], 10).len(),
            3,
            "a tool without its vector is not ranked"
        );
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

    fn index(docs: &[(&str, &str, &str)], vectors: &[[f32; 2]]) -> HybridIndex {
        let schema = json!({});
        let texts: Vec<ToolText<'_>> = docs
            .iter()
            .map(|(name, description, toolkit)| ToolText {
                name,
                description,
                toolkit,
                input_schema: &schema,
            })
            .collect();
        let rows: Vec<&[f32]> = vectors.iter().map(|v| &v[..]).collect();
        HybridIndex {
            lexical: SearchIndex::build(&texts),
            dense: (!vectors.is_empty()).then(|| DenseIndex::new(2, &rows)),
            labels: docs.iter().map(|d| d.2.to_lowercase()).collect(),
        }
    }

    #[test]
    fn fusion_favours_agreement_and_keeps_either_side() {
        let idx = index(
            &[
                ("charges_list", "List charges.", "payments"),
                ("invoices_list", "List invoices.", "payments"),
                ("issues_list", "List issues.", "code"),
            ],
            &[[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]],
        );
        // words say invoices, meaning says issues: both are candidates, agreement wins
        let got = idx.search("list invoices", Some(&[0.5, 0.866]), None, 3);
        assert_eq!(got[0], 1);
        assert_eq!(
            got.len(),
            3,
            "the dense ranking brings tools sharing no word"
        );
        // no vector: words alone, tools sharing no word left out
        assert_eq!(idx.search("invoices", None, None, 3), [1]);
        // the toolkit filter
        assert_eq!(idx.search("list", Some(&[0.6, 0.8]), Some("Code"), 3), [2]);
        assert!(idx.search("list", None, Some("nothing"), 3).is_empty());
    }

    #[test]
    fn a_tool_without_its_vector_still_ranks_by_words() {
        let idx = index(
            &[
                ("charges_list", "List charges.", "payments"),
                ("refunds_create", "Refund a charge.", "payments"),
            ],
            &[[1.0, 0.0], [0.0, 0.0]],
        );
        let got = idx.search("refund", Some(&[1.0, 0.0]), None, 2);
        assert_eq!(
            got,
            [1, 0],
            "words put the refund first; meaning adds the other"
        );
    }

    #[test]
    fn the_action_and_the_named_toolkit_decide_between_equals() {
        let idx = index(
            &[
                ("star_delete", "Unstar a repository.", "github"),
                ("star_create", "Star a repository.", "github"),
                ("gists_star_create", "Star a gist.", "gists"),
            ],
            &[],
        );
        let f = Fusion {
            action: 1.0,
            toolkit: 1.0,
            ..FUSION
        };
        let got = idx.search_with("github: star repository", None, None, &f, 3);
        assert_eq!(got[0], 1, "{got:?}");
        assert_eq!(idx.search_with("delete star", None, None, &f, 1), [0]);
    }

    #[test]
    fn tool_text_reads_the_summary_toolkit_and_name_as_words() {
        let s = json!({"x-loopgate-doc": {"summary": "Get a profile"}});
        let t = ToolText {
            name: "users_getProfile",
            description: " Gets the profile. ",
            toolkit: "mail",
            input_schema: &s,
        };
        assert_eq!(
            tool_text(&t.doc()),
            "mail: Get a profile (users get profile). Gets the profile."
        );
        let bare = json!({});
        let t = ToolText {
            input_schema: &bare,
            ..t
        };
        assert_eq!(
            tool_text(&t.doc()),
            "mail: users get profile. Gets the profile."
        );
    }
}
