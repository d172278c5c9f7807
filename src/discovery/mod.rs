//! Tool discovery and connected-app toolkits, the pure part (D1–D3): which
//! bound tools are offered directly and which wait in a pool ([`placement`]), how the
//! pool is searched ([`search`], [`text`]), and the meta-tools the model is shown for
//! both ([`meta`]). No HTTP, database or runtime types: the runtime feeds it bindings
//! and thread state and maps its answers.

pub mod document;
pub mod hybrid;
pub mod meta;
pub mod placement;
pub mod search;
pub mod text;

#[cfg(test)]
mod quality_tests;

pub use document::{ToolDoc, ToolSource, DOC_KEY};
pub use hybrid::{DenseIndex, HybridIndex};
pub use placement::{place, toolkit_of_tool, Candidate, Place, DEFAULT_BUDGET};
pub use search::{short_description, SearchIndex, ToolText};

/// Known tool names closest to `name` (edit distance over lower-cased names, then
/// shared words), best first, for an "unknown tool" error the model can act on.
pub fn close_matches<'a>(
    name: &str,
    known: impl Iterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let want = name.to_lowercase();
    let want_words: Vec<String> = text::terms(name);
    let mut scored: Vec<(usize, usize, &str)> = known
        .map(|k| {
            let d = edit_distance(&want, &k.to_lowercase());
            let shared = text::terms(k)
                .iter()
                .filter(|t| want_words.contains(t))
                .count();
            (d, usize::MAX - shared, k)
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    let limit = want.chars().count().max(4);
    scored
        .into_iter()
        .filter(|(d, shared, _)| *d <= limit / 2 || *shared != usize::MAX)
        .take(n)
        .map(|(_, _, k)| k)
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_matches_by_spelling_and_by_words() {
        let known = [
            "users_messages_send",
            "users_messages_trash",
            "events_list",
            "chatPostMessage",
        ];
        assert_eq!(
            close_matches("users_message_send", known.iter().copied(), 2)[0],
            "users_messages_send"
        );
        assert_eq!(
            close_matches("list_events", known.iter().copied(), 1),
            ["events_list"]
        );
        assert!(close_matches("zzzzzzzzzzzz", known.iter().copied(), 3).is_empty());
    }
}
