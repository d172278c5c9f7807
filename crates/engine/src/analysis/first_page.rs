//! P11, the schema half: what a page-number parameter's schema says about the API's first
//! page — its `default` (the page the API serves when the parameter is left out), a
//! description saying "zero-based" or "starts at 1", and its `minimum` — and how much
//! that is worth. The walk (`walk::first_page`) weighs it against what the API answers.
//!
//! - **Firm**: a `default`, a description, or a `minimum` of 1 or more (page 0 is refused),
//!   all agreeing. The walk starts there and still listens to the first response.
//! - **Weak**: a `minimum` of 0 alone (it says page 0 may be sent, not that it is a page of
//!   its own: some 1-based APIs serve page 1 for it): the walk starts there and checks what
//!   it can; or nothing at all (page 1, the common convention): the walk asks for the API's
//!   own first page (no page parameter) and compares page 1 with it.
//! - **Conflict**: firm statements that disagree (`default: 1` with "zero-based"). The
//!   first request leaves the page parameter out, and the API's answer decides.

use serde_json::Value;

use crate::analysis::Param;

/// How much the schema's word on the first page is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    Firm,
    Weak,
    Conflict,
}

/// The first page number the schema points to, and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaBase {
    pub page: i64,
    pub strength: Strength,
}

/// The schema's first page of page-number parameter `p`.
pub fn schema_base(p: &Param) -> SchemaBase {
    let default = p.default.as_ref().and_then(as_page);
    let firm: Vec<i64> = default
        .into_iter()
        .chain(p.first_page_said)
        .chain(p.minimum.filter(|m| *m >= 1))
        .collect();
    match firm.first() {
        Some(&page) if firm.iter().all(|f| *f == page) => SchemaBase {
            page,
            strength: Strength::Firm,
        },
        Some(&page) => SchemaBase {
            page,
            strength: Strength::Conflict,
        },
        None => SchemaBase {
            page: p.minimum.filter(|m| *m == 0).unwrap_or(1),
            strength: Strength::Weak,
        },
    }
}

fn as_page(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str()?.trim().parse().ok())
        .filter(|n| *n >= 0)
}

/// Phrases that state the first page number, each followed by the number it states.
const SAID: &[(&str, i64)] = &[
    ("zero-based", 0),
    ("zero based", 0),
    ("0-based", 0),
    ("0 based", 0),
    ("zero-indexed", 0),
    ("zero indexed", 0),
    ("0-indexed", 0),
    ("(0..n)", 0),
    ("one-based", 1),
    ("one based", 1),
    ("1-based", 1),
    ("1 based", 1),
    ("one-indexed", 1),
    ("1-indexed", 1),
];

/// Phrases followed by the first page's number (`starts at 0`, `first page is 1`).
const LEADS: &[&str] = &[
    "start at ",
    "starts at ",
    "start from ",
    "starting at ",
    "starts from ",
    "starting from ",
    "numbered from ",
    "begins at ",
    "beginning at ",
    "first page is ",
    "first page is page ",
    "the first page is ",
    "first page = ",
];

/// The first page number a parameter's description states, when it states exactly one.
pub fn said_in(description: &str) -> Option<i64> {
    let d = description.to_ascii_lowercase();
    let mut said: Vec<i64> = SAID
        .iter()
        .filter(|(phrase, _)| d.contains(phrase))
        .map(|(_, n)| *n)
        .collect();
    for lead in LEADS {
        let mut rest = d.as_str();
        while let Some(at) = rest.find(lead) {
            rest = &rest[at + lead.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n @ 0..=1) = digits.parse::<i64>() {
                said.push(n);
            }
        }
    }
    said.dedup();
    match said.as_slice() {
        [n] => Some(*n),
        [n, rest @ ..] if rest.iter().all(|r| r == n) => Some(*n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use serde_json::json;

    fn base(page: Value) -> SchemaBase {
        let a = analyze(&json!({"properties": {"size": {"type": "integer"}, "page": page}}));
        schema_base(a.page_number.as_ref().unwrap_or_else(|| panic!("no page")))
    }

    #[test]
    fn p11_the_schema_default_description_and_minimum_point_to_the_first_page() {
        use Strength::*;
        let b = |page, strength| SchemaBase { page, strength };
        assert_eq!(base(json!({"type": "integer"})), b(1, Weak));
        assert_eq!(base(json!({"type": "integer", "minimum": 0})), b(0, Weak));
        assert_eq!(base(json!({"type": "integer", "minimum": 1})), b(1, Firm));
        assert_eq!(base(json!({"type": "integer", "default": 0})), b(0, Firm));
        assert_eq!(
            base(json!({"type": "integer", "default": 1, "minimum": 0})),
            b(1, Firm),
            "a minimum of 0 only says 0 may be sent"
        );
        assert_eq!(
            base(json!({"type": "integer", "description": "Zero-based page index (0..N)"})),
            b(0, Firm),
            "Spring Data's own words"
        );
        assert_eq!(
            base(json!({"type": "integer", "description": "Page number, starting at 1."})),
            b(1, Firm)
        );
        assert_eq!(
            base(json!({"type": "integer", "default": 1, "description": "0-based page"})),
            b(1, Conflict)
        );
        assert_eq!(
            base(json!({"type": "integer", "default": 0, "minimum": 1})),
            b(0, Conflict)
        );
    }

    #[test]
    fn p11_a_description_states_a_first_page_only_when_it_says_one_number() {
        assert_eq!(said_in("The page to return (zero-based)."), Some(0));
        assert_eq!(said_in("Page numbers start at 1"), Some(1));
        assert_eq!(said_in("Pages are numbered starting from 1."), Some(1));
        assert_eq!(said_in("The first page is 0"), Some(0));
        assert_eq!(said_in("starts at 10 rows"), None);
        assert_eq!(said_in("1-based, unlike the zero-based offset"), None);
        assert_eq!(said_in("Which page"), None);
    }
}
