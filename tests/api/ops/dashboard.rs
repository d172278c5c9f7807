//! The shipped Grafana dashboard (`helm/loopgate/dashboards/loopgate.json`) refers only
//! to metrics the running service exposes: every metric name in a panel's query is a
//! series in `/metrics` after a walk, a rate-limited call and a cache hit.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::support::rig::Rig;

const DASHBOARD: &str = include_str!("../../../helm/loopgate/dashboards/loopgate.json");

/// Every `loopgate_…` name in the dashboard's queries.
fn referenced() -> BTreeSet<String> {
    let d: Value = serde_json::from_str(DASHBOARD).expect("the dashboard is JSON");
    let mut names = BTreeSet::new();
    for panel in d["panels"].as_array().expect("panels") {
        for t in panel["targets"].as_array().expect("targets") {
            let expr = t["expr"].as_str().expect("expr");
            let mut rest = expr;
            while let Some(i) = rest.find("loopgate_") {
                let tail = &rest[i..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                names.insert(tail[..end].to_string());
                rest = &tail[end..];
            }
        }
    }
    names
}

/// The sample names of an OpenMetrics text (what a PromQL query selects).
fn samples(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn every_metric_the_dashboard_queries_is_served() {
    let (app, _up, rig, token) = Rig::start(true).await;
    // a walk with retries and a stop reason, its cache hit, and a rate-limited provider
    for _ in 0..2 {
        rig.call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await
        .ok(200);
    }
    rig.call(
        &app,
        &token,
        "t",
        "flaky_contacts",
        json!({"_all_pages": true}),
    )
    .await
    .ok(200);
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert_eq!(m.status.as_u16(), 200);
    let served = samples(&m.text);
    let wanted = referenced();
    assert!(wanted.len() >= 15, "the dashboard queries {wanted:?}");
    let missing: Vec<&String> = wanted.iter().filter(|n| !served.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics /metrics does not serve: {missing:?}\n{}",
        m.text
    );
}
