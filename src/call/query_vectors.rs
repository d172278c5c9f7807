//! D5: the query vectors a replica computed lately, per org: a `search_tools` query asked
//! again (the same words, whatever the spacing) skips its embedding. Each org keeps its
//! [`PER_ORG`] most recently used ones; another org's queries never evict them and are
//! never answered from them. A vector depends only on the text and the model the process
//! runs, so an entry is never stale.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Query vectors kept per org (least recently used dropped first).
pub const PER_ORG: usize = 256;
/// Orgs kept before the map starts over (a bound: 1,000 × 256 × 1.5 KiB ≈ 375 MiB at
/// most, far less in practice).
const MAX_ORGS: usize = 1000;

/// The key of a query: its words, single-spaced (the tokenizer ignores spacing).
pub fn query_key(query: &str) -> String {
    query.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Default)]
struct OrgQueries {
    tick: u64,
    vectors: HashMap<String, (u64, Arc<[f32]>)>,
}

impl OrgQueries {
    fn get(&mut self, key: &str) -> Option<Arc<[f32]>> {
        self.tick += 1;
        let tick = self.tick;
        self.vectors.get_mut(key).map(|(used, v)| {
            *used = tick;
            v.clone()
        })
    }

    fn put(&mut self, key: String, v: Arc<[f32]>) {
        self.tick += 1;
        if self.vectors.len() >= PER_ORG && !self.vectors.contains_key(&key) {
            let oldest = self
                .vectors
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.vectors.remove(&k);
            }
        }
        self.vectors.insert(key, (self.tick, v));
    }
}

/// This replica's recent query vectors, by org.
#[derive(Default)]
pub struct QueryVectors {
    orgs: Mutex<HashMap<String, OrgQueries>>,
}

impl QueryVectors {
    fn orgs(&self) -> std::sync::MutexGuard<'_, HashMap<String, OrgQueries>> {
        self.orgs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The vector of `key` ([`query_key`]) for `org`, if kept.
    pub fn get(&self, org: &str, key: &str) -> Option<Arc<[f32]>> {
        self.orgs().get_mut(org)?.get(key)
    }

    pub fn put(&self, org: &str, key: String, v: Arc<[f32]>) {
        let mut orgs = self.orgs();
        if orgs.len() >= MAX_ORGS && !orgs.contains_key(org) {
            orgs.clear();
        }
        orgs.entry(org.to_owned()).or_default().put(key, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32) -> Arc<[f32]> {
        vec![x].into()
    }

    #[test]
    fn kept_per_org_and_least_recently_used_dropped_first() {
        let q = QueryVectors::default();
        assert_eq!(query_key("  send   an\temail "), "send an email");
        q.put("org_a", query_key("send an email"), v(1.0));
        assert_eq!(
            q.get("org_a", &query_key("send  an email")).as_deref(),
            Some(&[1.0][..])
        );
        assert!(q.get("org_b", "send an email").is_none(), "another org's");
        for i in 0..PER_ORG - 1 {
            q.put("org_a", format!("q{i}"), v(i as f32));
        }
        // full: using the first keeps it; the next new one drops the oldest unused, q0
        assert!(q.get("org_a", "send an email").is_some());
        q.put("org_a", "new".into(), v(9.0));
        assert!(q.get("org_a", "send an email").is_some());
        assert!(q.get("org_a", "q0").is_none());
        assert!(q.get("org_a", "q1").is_some() && q.get("org_a", "new").is_some());
        // another org's queries evict none of org_a's
        for i in 0..PER_ORG + 10 {
            q.put("org_b", format!("b{i}"), v(0.0));
        }
        assert!(q.get("org_a", "new").is_some());
        assert_eq!(q.orgs()["org_a"].vectors.len(), PER_ORG);
        assert_eq!(q.orgs()["org_b"].vectors.len(), PER_ORG);
    }
}
