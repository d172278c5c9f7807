//! `search_tools` ranking (D1): BM25 in process over each pooled tool's name (split on
//! `_`, `-`, camelCase), toolkit, description and parameter names and descriptions,
//! with field weights (a word in the name counts more than one in a parameter's
//! description) and query expansion through the thesaurus in [`super::text`] at a
//! lower weight. An index is built once per set of pooled tools; building one for a few
//! hundred tools takes well under a millisecond.

use std::collections::HashMap;

use serde_json::Value;

use super::text::{actions, name_actions, related, rewrite_query, terms};

const K1: f64 = 1.2;
/// Fields scored separately (BM25F-style, so a long description cannot drown the
/// name): (weight, length normalisation).
const FIELDS: [(f64, f64); 3] = [
    // name and toolkit
    (3.0, 0.3),
    // description
    (1.0, 0.75),
    // parameter names and descriptions
    (0.4, 0.75),
];
/// Weight of a thesaurus expansion of a query word, against 1.0 for the word itself.
const W_RELATED: f64 = 0.4;
/// Score factor for a tool whose name does what the request asks (list, send, delete, …).
const ACTION_BOOST: f64 = 1.5;

/// What is searched of one tool.
#[derive(Debug, Clone)]
pub struct ToolText<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub toolkit: &'a str,
    pub input_schema: &'a Value,
}

/// A BM25 index over a fixed list of tools; results are indexes into that list.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// term → (document, term frequency per field)
    postings: HashMap<String, Vec<(usize, [f64; 3])>>,
    lengths: Vec<[f64; 3]>,
    avg_lengths: [f64; 3],
    names: Vec<String>,
    /// the action classes of each tool's name
    actions: Vec<u16>,
}

/// Parameter names and descriptions, top level and one level down in a `body`.
fn params(schema: &Value, out: &mut Vec<(String, String)>, depth: u8) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, p) in props {
        if name.starts_with('_') {
            continue;
        }
        let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
        out.push((name.clone(), desc.to_string()));
        if depth == 0 && p.get("properties").is_some() {
            params(p, out, 1);
        }
    }
}

impl SearchIndex {
    pub fn build(tools: &[ToolText<'_>]) -> Self {
        let mut postings: HashMap<String, Vec<(usize, [f64; 3])>> = HashMap::new();
        let mut lengths = Vec::with_capacity(tools.len());
        for (doc, t) in tools.iter().enumerate() {
            let mut tf: HashMap<String, [f64; 3]> = HashMap::new();
            let mut len = [0.0; 3];
            let mut add = |text: &str, field: usize, w: f64| {
                for term in terms(text) {
                    tf.entry(term).or_default()[field] += w;
                    len[field] += w;
                }
            };
            add(t.name, 0, 1.0);
            add(t.toolkit, 0, 0.5);
            add(t.description, 1, 1.0);
            let mut ps = Vec::new();
            params(t.input_schema, &mut ps, 0);
            for (name, desc) in &ps {
                add(name, 2, 1.0);
                add(desc, 2, 0.5);
            }
            lengths.push(len);
            for (term, f) in tf {
                postings.entry(term).or_default().push((doc, f));
            }
        }
        let mut avg_lengths = [1.0; 3];
        if !lengths.is_empty() {
            for (f, avg) in avg_lengths.iter_mut().enumerate() {
                *avg = (lengths.iter().map(|l| l[f]).sum::<f64>() / lengths.len() as f64).max(1.0);
            }
        }
        SearchIndex {
            postings,
            lengths,
            avg_lengths,
            names: tools.iter().map(|t| t.name.to_string()).collect(),
            actions: tools.iter().map(|t| name_actions(t.name)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
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

    /// Up to `limit` tools by relevance, best first (ties by name); tools that share no
    /// term with the query are not returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let n = self.names.len() as f64;
        let query = rewrite_query(query);
        let wanted = actions(&query);
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for (term, qw) in Self::query_terms(&query) {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let mut s = 0.0;
                for (f, (weight, b)) in FIELDS.iter().enumerate() {
                    if tf[f] > 0.0 {
                        let norm = K1 * (1.0 - b + b * self.lengths[doc][f] / self.avg_lengths[f]);
                        s += weight * tf[f] * (K1 + 1.0) / (tf[f] + norm);
                    }
                }
                *scores.entry(doc).or_default() += qw * idf * s;
            }
        }
        for (doc, s) in scores.iter_mut() {
            if self.actions[*doc] & wanted != 0 {
                *s *= ACTION_BOOST;
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().filter(|(_, s)| *s > 0.0).collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.names[a.0].cmp(&self.names[b.0]))
        });
        ranked.into_iter().take(limit).map(|(d, _)| d).collect()
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
