//! D1: the committed search-quality set. Natural-language requests, worded unlike the
//! tool names, over three realistic toolkits searched together (mail-like 60 tools,
//! chat-like 3, calendar-like 8): the expected tool must be in the top 3 for at least
//! 90% of the queries and first for at least 70%. The figures are printed
//! (`cargo test --lib discovery::quality -- --nocapture`).

use serde::Deserialize;
use serde_json::Value;

use super::search::{SearchIndex, ToolText};

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
struct Query {
    query: String,
    expected: String,
}

#[derive(Deserialize)]
struct QuerySet {
    queries: Vec<Query>,
}

fn toolkits() -> Vec<Toolkit> {
    [
        include_str!("../../tests/fixtures/toolkits/mail.json"),
        include_str!("../../tests/fixtures/toolkits/chat.json"),
        include_str!("../../tests/fixtures/toolkits/calendar.json"),
    ]
    .iter()
    .map(|s| serde_json::from_str(s).expect("toolkit fixture"))
    .collect()
}

#[test]
fn d1_search_quality_set_meets_its_thresholds() {
    let kits = toolkits();
    assert_eq!(
        kits.iter().map(|k| k.tools.len()).collect::<Vec<_>>(),
        [60, 3, 8]
    );
    let texts: Vec<ToolText<'_>> = kits
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
    let index = SearchIndex::build(&texts);
    let set: QuerySet =
        serde_json::from_str(include_str!("../../tests/fixtures/toolkits/queries.json"))
            .expect("query set");
    assert!(set.queries.len() >= 40);
    let (mut top1, mut top3) = (0, 0);
    for q in &set.queries {
        assert!(
            texts.iter().any(|t| t.name == q.expected),
            "unknown expected tool {}",
            q.expected
        );
        let ranked: Vec<&str> = index
            .search(&q.query, 5)
            .into_iter()
            .map(|i| texts[i].name)
            .collect();
        let pos = ranked.iter().position(|n| *n == q.expected);
        top1 += usize::from(pos == Some(0));
        top3 += usize::from(pos.is_some_and(|p| p < 3));
        if pos != Some(0) {
            eprintln!(
                "  miss@1 {:?}: expected {}, got {:?}",
                q.query, q.expected, ranked
            );
        }
    }
    let n = set.queries.len() as f64;
    let (r1, r3) = (top1 as f64 / n, top3 as f64 / n);
    eprintln!(
        "search quality: {} queries, {} tools: top-1 {top1} ({:.1}%), top-3 {top3} ({:.1}%)",
        set.queries.len(),
        texts.len(),
        r1 * 100.0,
        r3 * 100.0
    );
    assert!(r3 >= 0.9, "top-3 {:.1}% < 90%", r3 * 100.0);
    assert!(r1 >= 0.7, "top-1 {:.1}% < 70%", r1 * 100.0);
}
