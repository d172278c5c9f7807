//! D1, D2: which of an agent's tools the model is offered directly and which wait in
//! the pool behind `search_tools` / `load_tool`. Deterministic: the same bindings and
//! budget always give the same placement, whatever order the bindings come in.

use std::collections::BTreeMap;

use crate::store::tools::ToolKind;

/// The connected-app toolkit a tool belongs to (D2): only tools of kind `app` have one —
/// the tool's own `toolkit`, else its provider's, else the provider's name. `None` for
/// the org's own API and MCP tools.
pub fn toolkit_of_tool<'a>(
    kind: ToolKind,
    tool_toolkit: Option<&'a str>,
    provider_toolkit: Option<&'a str>,
    provider_name: &'a str,
) -> Option<&'a str> {
    (kind == ToolKind::App).then(|| tool_toolkit.or(provider_toolkit).unwrap_or(provider_name))
}

/// The direct-tool budget when neither the agent nor the deployment sets one (D1).
pub const DEFAULT_BUDGET: usize = 15;

/// What placement needs to know about one bound tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// Connected-app toolkit of the tool; `None` for the org's own API and MCP tools.
    pub toolkit: Option<&'a str>,
    /// The binding's override: `Some(true)` always pooled, `Some(false)` always direct.
    pub discovery: Option<bool>,
}

/// Where one tool goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Direct,
    Pooled,
}

/// Places `tools` (index-aligned result) under `budget` directly offered tools (D2):
/// own tools and `discovery: false` bindings are direct and counted, even past the
/// budget; `discovery: true` bindings are pooled; the remaining connected-app tools go
/// by toolkit, smallest first (ties by name), each kept direct whole while it fits what
/// is left — the first toolkit that does not fit, and every one after it, is pooled.
pub fn place(tools: &[Candidate<'_>], budget: usize) -> Vec<Place> {
    let mut out = vec![Place::Pooled; tools.len()];
    let mut used = 0usize;
    let mut toolkits: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in tools.iter().enumerate() {
        match (c.discovery, c.toolkit) {
            (Some(true), _) => {}
            (Some(false), _) | (None, None) => {
                out[i] = Place::Direct;
                used += 1;
            }
            (None, Some(kit)) => toolkits.entry(kit).or_default().push(i),
        }
    }
    let mut groups: Vec<(&str, Vec<usize>)> = toolkits.into_iter().collect();
    // stable sort over name-ordered groups: smallest first, ties by toolkit name
    groups.sort_by_key(|(_, members)| members.len());
    let mut left = budget.saturating_sub(used);
    for (_, members) in groups {
        if members.len() > left {
            break;
        }
        left -= members.len();
        for i in members {
            out[i] = Place::Direct;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(n: usize) -> Vec<Candidate<'static>> {
        vec![
            Candidate {
                toolkit: None,
                discovery: None
            };
            n
        ]
    }
    fn kit(name: &'static str, n: usize) -> Vec<Candidate<'static>> {
        vec![
            Candidate {
                toolkit: Some(name),
                discovery: None
            };
            n
        ]
    }
    fn count(p: &[Place], range: std::ops::Range<usize>, want: Place) -> usize {
        p[range].iter().filter(|x| **x == want).count()
    }

    #[test]
    fn d2_small_toolkit_stays_direct_beside_a_large_one() {
        // the seed's example: 4 own tools, mail (60) and chat (3)
        let mut tools = own(4);
        tools.extend(kit("mail", 60));
        tools.extend(kit("chat", 3));
        let p = place(&tools, DEFAULT_BUDGET);
        assert_eq!(count(&p, 0..4, Place::Direct), 4);
        assert_eq!(count(&p, 4..64, Place::Pooled), 60);
        assert_eq!(count(&p, 64..67, Place::Direct), 3);
    }

    #[test]
    fn d2_smallest_first_and_the_first_misfit_pools_every_later_toolkit() {
        // 2 own → 13 left: chat 3 (10 left), tasks 4 (6), notes 5 (1), calendar 8 misfits
        let mut tools = own(2);
        tools.extend(kit("calendar", 8));
        tools.extend(kit("chat", 3));
        tools.extend(kit("tasks", 4));
        tools.extend(kit("notes", 5));
        let p = place(&tools, 15);
        assert_eq!(count(&p, 2..10, Place::Pooled), 8);
        assert_eq!(count(&p, 10..22, Place::Direct), 12);
        // 10 own → 5 left: tiny 1 (4 left), a 4 (0 left), b 4 misfits
        let mut tools = own(10);
        tools.extend(kit("a", 4));
        tools.extend(kit("b", 4));
        tools.extend(kit("tiny", 1));
        let p = place(&tools, 15);
        assert_eq!(count(&p, 10..14, Place::Direct), 4);
        assert_eq!(count(&p, 14..18, Place::Pooled), 4);
        assert_eq!(p[18], Place::Direct);
    }

    #[test]
    fn d2_own_and_false_overrides_count_even_past_the_budget() {
        let mut tools = own(20);
        tools.push(Candidate {
            toolkit: Some("mail"),
            discovery: Some(false),
        });
        tools.extend(kit("chat", 1));
        let p = place(&tools, 15);
        assert!(p[..21].iter().all(|x| *x == Place::Direct));
        assert_eq!(p[21], Place::Pooled, "nothing is left for a toolkit");
    }

    #[test]
    fn d2_true_override_pools_even_own_tools_and_frees_budget() {
        let mut tools = own(3);
        tools[0].discovery = Some(true);
        tools.extend(kit("chat", 3));
        let p = place(&tools, 5);
        assert_eq!(p[0], Place::Pooled);
        assert_eq!(count(&p, 1..6, Place::Direct), 5);
    }

    #[test]
    fn d2_order_of_bindings_does_not_matter() {
        let mut a = kit("x", 3);
        a.extend(kit("y", 3));
        let mut b = kit("y", 3);
        b.extend(kit("x", 3));
        // equal sizes: the name decides, so x is direct in both orders
        let pa = place(&a, 4);
        let pb = place(&b, 4);
        assert_eq!(count(&pa, 0..3, Place::Direct), 3);
        assert_eq!(count(&pb, 3..6, Place::Direct), 3);
        assert_eq!(count(&pa, 3..6, Place::Pooled), 3);
    }

    #[test]
    fn d1_nothing_pooled_under_the_budget() {
        let mut tools = own(5);
        tools.extend(kit("calendar", 8));
        assert!(place(&tools, 15).iter().all(|x| *x == Place::Direct));
        assert!(place(&[], 15).is_empty());
    }
}
