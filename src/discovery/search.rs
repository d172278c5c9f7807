//! `search_tools` lexical ranking (D1, D6): BM25F in process over the fields of each
//! pooled tool's document ([`super::document`]: name, summary, description, path and
//! tags, toolkit, implied action, parameters, response fields), each field weighted and
//! length-normalised on its own (a word in the name counts more than one in a
//! parameter's description), with query expansion through the vocabulary in
//! [`super::text`] at a lower weight. An index is built once per set of pooled tools.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHasher};
use serde_json::Value;

use super::document::{Field, ToolDoc, ToolSource, FIELD_COUNT};
use super::text::{actions, related, rewrite_query, terms};

const K1: f64 = 1.2;

/// Per-field (weight, length normalisation) of BM25F, in [`Field`] order, so a long
/// description cannot drown the name. Chosen on the dev halves of the evaluation sets
/// (`call::search_quality_tests`), never on their test halves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights(pub [(f64, f64); FIELD_COUNT]);

pub const FIELD_WEIGHTS: FieldWeights = FieldWeights([
    // name (operationId)
    (1.0, 0.3),
    // summary or title
    (2.5, 0.3),
    // description
    (1.0, 0.75),
    // path words and tags
    (1.0, 0.5),
    // toolkit and provider
    (0.6, 0.3),
    // the action the method and path imply
    (1.0, 0.0),
    // parameter names
    (0.4, 0.75),
    // parameter descriptions and enum values
    (0.2, 0.75),
    // response field names
    (0.3, 0.75),
]);

/// Weight of a thesaurus expansion of a query word, against 1.0 for the word itself.
const W_RELATED: f64 = 0.4;
/// Score factor of the lexical ranking alone for a tool that does what the request asks
/// (list, send, delete, …); fused rankings weigh the action match themselves.
pub const ACTION_BOOST: f64 = 1.5;

/// What is searched of one tool without an HTTP method and path to go by (tests and
/// hand-written fixtures; the runtime builds [`ToolDoc`]s from the stored tool).
#[derive(Debug, Clone)]
pub struct ToolText<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub toolkit: &'a str,
    pub input_schema: &'a Value,
}

impl ToolText<'_> {
    pub fn doc(&self) -> ToolDoc {
        ToolDoc::build(&ToolSource {
            name: self.name,
            description: self.description,
            method: "",
            path: "",
            input_schema: self.input_schema,
            toolkit: self.toolkit,
            provider: "",
            mcp: false,
        })
    }
}

/// A term's number: a 64-bit hash of it, the same in every process, kept by no table
/// (nothing grows with what tenants import; two terms sharing a number is a chance of
/// one in 2⁶⁴ per pair). A tool's document is analysed once into numbered terms
/// ([`AnalysedDoc`]) and a pool's index merged from those without reading text again.
pub fn term_id(term: &str) -> u64 {
    let mut h = FxHasher::default();
    term.hash(&mut h);
    h.finish()
}

/// One tool's document as the index reads it: its numbered terms with their frequency
/// per field, its field lengths, its action classes and its toolkit's terms. Made once
/// per tool version (`call::offered_tools` keeps them) and shared by every pool index.
#[derive(Debug, Clone, Default)]
pub struct AnalysedDoc {
    terms: Vec<(u64, [f32; FIELD_COUNT])>,
    lengths: [f32; FIELD_COUNT],
    name: String,
    actions: u16,
    kit: Vec<u64>,
}

impl AnalysedDoc {
    pub fn new(d: &ToolDoc) -> Self {
        let mut tf: FxHashMap<u64, [f32; FIELD_COUNT]> = FxHashMap::default();
        let mut lengths = [0f32; FIELD_COUNT];
        for (field, text) in d.parts.iter().enumerate() {
            for term in terms(text) {
                tf.entry(term_id(&term)).or_default()[field] += 1.0;
                lengths[field] += 1.0;
            }
        }
        let mut terms_: Vec<(u64, [f32; FIELD_COUNT])> = tf.into_iter().collect();
        terms_.sort_unstable_by_key(|t| t.0);
        AnalysedDoc {
            terms: terms_,
            lengths,
            name: d.parts[Field::Name as usize].clone(),
            actions: d.actions,
            kit: terms(&d.parts[Field::Toolkit as usize])
                .iter()
                .map(|t| term_id(t))
                .collect(),
        }
    }

    /// Bytes it holds (for the cache's bound).
    pub fn bytes(&self) -> usize {
        self.terms.len() * std::mem::size_of::<(u64, [f32; FIELD_COUNT])>()
            + self.name.len()
            + self.kit.len() * 8
            + std::mem::size_of::<Self>()
    }
}

/// A BM25F index over a fixed list of tools; results are indexes into that list.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// term → (document, term frequency per field)
    postings: FxHashMap<u64, Vec<(u32, [f32; FIELD_COUNT])>>,
    docs: Vec<Arc<AnalysedDoc>>,
    avg_lengths: [f64; FIELD_COUNT],
}

/// A lexical hit: the tool and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
}

impl SearchIndex {
    pub fn build(tools: &[ToolText<'_>]) -> Self {
        let docs: Vec<ToolDoc> = tools.iter().map(ToolText::doc).collect();
        Self::from_docs(&docs)
    }

    pub fn from_docs(docs: &[ToolDoc]) -> Self {
        let analysed: Vec<Arc<AnalysedDoc>> =
            docs.iter().map(|d| Arc::new(AnalysedDoc::new(d))).collect();
        Self::from_analysed(analysed)
    }

    /// The index of documents analysed before: their terms merged into postings, no
    /// text read again.
    pub fn from_analysed(docs: Vec<Arc<AnalysedDoc>>) -> Self {
        let mut postings: FxHashMap<u64, Vec<(u32, [f32; FIELD_COUNT])>> = FxHashMap::default();
        let mut sums = [0f64; FIELD_COUNT];
        for (doc, d) in docs.iter().enumerate() {
            for (f, sum) in sums.iter_mut().enumerate() {
                *sum += f64::from(d.lengths[f]);
            }
            for &(term, tf) in &d.terms {
                postings.entry(term).or_default().push((doc as u32, tf));
            }
        }
        let mut avg_lengths = [1.0; FIELD_COUNT];
        if !docs.is_empty() {
            for (f, avg) in avg_lengths.iter_mut().enumerate() {
                *avg = (sums[f] / docs.len() as f64).max(1.0);
            }
        }
        SearchIndex {
            postings,
            docs,
            avg_lengths,
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Tool `doc`'s action classes.
    pub fn actions_of(&self, doc: usize) -> u16 {
        self.docs.get(doc).map_or(0, |d| d.actions)
    }

    /// Whether the request names tool `doc`'s toolkit or provider.
    pub fn names_kit(&self, doc: usize, query_terms: &[String]) -> bool {
        self.docs.get(doc).is_some_and(|d| {
            !d.kit.is_empty() && query_terms.iter().any(|t| d.kit.contains(&term_id(t)))
        })
    }

    /// The query's terms with their weights: its own words at 1.0, related words lower.
    fn query_terms(query: &str) -> HashMap<String, f64> {
        let mut q: HashMap<String, f64> = HashMap::new();
        let own = terms(query);
        for t in &own {
            q.insert(t.clone(), 1.0);
        }
        // several words of the request pointing at one term are stronger evidence
        let mut expanded: HashMap<String, f64> = HashMap::new();
        for t in &own {
            for r in related(t) {
                *expanded.entry(r.clone()).or_default() += W_RELATED;
            }
        }
        for (r, w) in expanded {
            let e = q.entry(r).or_insert(0.0);
            *e = e.max(w.min(1.0));
        }
        q
    }

    /// BM25F scores of the tools sharing a term with the (rewritten) query, unordered;
    /// `keep` says which tools may be scored (a toolkit filter).
    pub fn scores(&self, query: &str, w: &FieldWeights, keep: &dyn Fn(usize) -> bool) -> Vec<Hit> {
        let n = self.docs.len() as f64;
        let mut scores: FxHashMap<usize, f64> = FxHashMap::default();
        for (term, qw) in Self::query_terms(query) {
            let Some(list) = self.postings.get(&term_id(&term)) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let doc = doc as usize;
                if !keep(doc) {
                    continue;
                }
                let mut s = 0.0;
                for (f, (weight, b)) in w.0.iter().enumerate() {
                    let tf = f64::from(tf[f]);
                    if tf > 0.0 && *weight > 0.0 {
                        let len = f64::from(self.docs[doc].lengths[f]);
                        let norm = K1 * (1.0 - b + b * len / self.avg_lengths[f]);
                        s += weight * tf * (K1 + 1.0) / (tf + norm);
                    }
                }
                *scores.entry(doc).or_default() += qw * idf * s;
            }
        }
        scores
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(doc, score)| Hit { doc, score })
            .collect()
    }

    /// Up to `limit` tools by relevance, best first (ties by name); tools that share no
    /// term with the query are not returned. A tool doing what the request asks scores
    /// [`ACTION_BOOST`] times more.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let query = rewrite_query(query);
        let wanted = actions(&query);
        let mut ranked = self.scores(&query, &FIELD_WEIGHTS, &|_| true);
        for h in &mut ranked {
            if self.docs[h.doc].actions & wanted != 0 {
                h.score *= ACTION_BOOST;
            }
        }
        self.sort(&mut ranked);
        ranked.into_iter().take(limit).map(|h| h.doc).collect()
    }

    /// Best first, ties by name then index.
    pub fn sort(&self, hits: &mut [Hit]) {
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.docs[a.doc].name.cmp(&self.docs[b.doc].name))
                .then(a.doc.cmp(&b.doc))
        });
    }
}

/// A description shortened for a search result: its first sentence, at most `max` chars.
pub fn short_description(description: &str, max: usize) -> String {
    let d = description.trim();
    let first = match d.find(". ") {
        Some(i) => &d[..=i],
        None => d,
    };
    if first.chars().count() <= max {
        return first.to_string();
    }
    let cut: String = first.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranks_by_name_description_and_parameters() {
        let schema = json!({"type": "object", "properties": {"calendarId": {"type": "string", "description": "Which calendar"}}});
        let empty = json!({});
        let tools = [
            ToolText {
                name: "events_list",
                description: "Lists events on a calendar.",
                toolkit: "calendar",
                input_schema: &schema,
            },
            ToolText {
                name: "messages_send",
                description: "Sends an email message to recipients.",
                toolkit: "mail",
                input_schema: &empty,
            },
            ToolText {
                name: "messages_trash",
                description: "Moves a message to the trash.",
                toolkit: "mail",
                input_schema: &empty,
            },
        ];
        let idx = SearchIndex::build(&tools);
        assert_eq!(idx.search("email my boss", 5)[0], 1);
        assert_eq!(
            idx.search("throw away that mail", 5)[0],
            2,
            "thesaurus: throw away → trash? via 'mail'"
        );
        assert_eq!(idx.search("upcoming meetings", 5), vec![0]);
        assert!(idx.search("zebra", 5).is_empty());
        assert_eq!(idx.search("message", 1).len(), 1);
    }

    #[test]
    fn short_descriptions_keep_the_first_sentence() {
        assert_eq!(
            short_description("Sends a message. Needs scope x.", 100),
            "Sends a message."
        );
        let long = "word ".repeat(50);
        let s = short_description(&long, 20);
        assert!(s.chars().count() <= 20 && s.ends_with('…'));
    }
}
