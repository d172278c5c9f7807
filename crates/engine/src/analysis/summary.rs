//! P13: how a tool pages, said for a person (the Studio's tool card): the style a walk
//! would use, the parameters it sets, whether an author's `x-loopgate-pagination` hint
//! or detection decided, and how sure detection is. Read from the same
//! [`ToolAnalysis`](super::ToolAnalysis) the walk uses, choosing the style in the walk's
//! order (size + offset, then size + page number, then a cursor).

use serde::Serialize;
use serde_json::Value;

use super::{analyze, Param, PAGINATION_HINT};

/// The style a walk of this tool would use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PagingStyle {
    Offset,
    Page,
    Cursor,
    /// No way to advance was found in the schema: `_all_pages` is not offered.
    None,
}

/// What decided the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PagingSource {
    Hint,
    Detected,
}

/// How sure the reading is: `declared` (the author's hint), `high` (names and declared
/// numeric types agree), `medium` (a cursor by name: the first response confirms it),
/// `low` (a name without a declared type, or an opaque string standing in for a cursor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
    Declared,
}

/// The parameters a walk sets, by role (`body.<name>` for a body field).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PagingParams {
    pub size: Option<String>,
    pub page: Option<String>,
    pub offset: Option<String>,
    pub cursor: Option<String>,
}

/// P13: the summary of one tool's pagination.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PagingSummary {
    pub style: PagingStyle,
    pub source: PagingSource,
    pub confidence: Confidence,
    pub parameters: PagingParams,
    /// The hint as stored in the schema, when there is one.
    pub hint: Option<Value>,
    /// One sentence for the person reading the card.
    pub note: String,
}

fn label(p: &Param) -> String {
    match p.in_body {
        true => format!("body.{}", p.name),
        false => p.name.clone(),
    }
}

fn typed(p: &Param) -> bool {
    p.is_numeric_typed() || (p.ty.as_deref() == Some("string") && p.numeric)
}

/// Summarises how the tool with this input schema pages.
pub fn summarize(input_schema: &Value) -> PagingSummary {
    let a = analyze(input_schema);
    let hint = input_schema.get(PAGINATION_HINT).cloned();
    let source = match hint {
        Some(_) => PagingSource::Hint,
        None => PagingSource::Detected,
    };
    let (style, roles): (PagingStyle, Vec<&Param>) =
        match (&a.page_size, &a.offset, &a.page_number, &a.cursor) {
            (Some(s), Some(o), _, _) => (PagingStyle::Offset, vec![s, o]),
            (Some(s), None, Some(p), _) => (PagingStyle::Page, vec![s, p]),
            (size, _, _, Some(c)) => (PagingStyle::Cursor, size.iter().chain([c]).collect()),
            _ => (PagingStyle::None, Vec::new()),
        };
    let confidence = match (source, style) {
        (PagingSource::Hint, _) => Confidence::Declared,
        // nothing found by name: sure there is no parameter to walk with
        (_, PagingStyle::None) => Confidence::High,
        (_, PagingStyle::Cursor) => match a.cursor.as_ref() {
            Some(c)
                if super::CURSOR_NAMES
                    .iter()
                    .any(|n| super::normalize(n) == super::normalize(&c.name)) =>
            {
                Confidence::Medium
            }
            _ => Confidence::Low,
        },
        _ => match roles.iter().all(|p| typed(p)) {
            true => Confidence::High,
            false => Confidence::Low,
        },
    };
    let note = match (style, source) {
        (PagingStyle::None, PagingSource::Hint) => {
            "Your hint turns page walking off for this tool.".to_string()
        }
        (PagingStyle::None, PagingSource::Detected) => "No page, offset or cursor parameter was \
            found, so _all_pages is not offered; add a hint if the API pages another way."
            .to_string(),
        (PagingStyle::Cursor, _) => "Walks follow the cursor each response hands out, one page \
            at a time; the first response confirms the style."
            .to_string(),
        (_, _) if confidence == Confidence::Low => "Found by name only (no numeric type \
            declared): the first response decides; add a hint if the walk goes wrong."
            .to_string(),
        _ => "Walks set the page size to its maximum and advance the position; later pages \
            may be fetched concurrently once the first response shows random access."
            .to_string(),
    };
    PagingSummary {
        style,
        source,
        confidence,
        parameters: PagingParams {
            size: a.page_size.as_ref().map(label),
            page: a.page_number.as_ref().map(label),
            offset: a.offset.as_ref().map(label),
            cursor: a.cursor.as_ref().map(label),
        },
        hint,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn p13_typed_offset_paging_is_detected_with_high_confidence() {
        let s = summarize(&schema(json!({
            "limit": {"type": "integer", "maximum": 100},
            "offset": {"type": "integer"}
        })));
        assert_eq!(s.style, PagingStyle::Offset);
        assert_eq!(s.source, PagingSource::Detected);
        assert_eq!(s.confidence, Confidence::High);
        assert_eq!(s.parameters.size.as_deref(), Some("limit"));
        assert_eq!(s.parameters.offset.as_deref(), Some("offset"));
        assert_eq!(s.parameters.page, None);
    }

    #[test]
    fn p13_untyped_page_parameters_are_low_confidence() {
        let s = summarize(&schema(
            json!({"page": {}, "per_page": {"type": "integer"}}),
        ));
        assert_eq!(s.style, PagingStyle::Page);
        assert_eq!(s.confidence, Confidence::Low);
    }

    #[test]
    fn p13_a_named_cursor_is_medium_and_an_opaque_offset_is_low() {
        let named = summarize(&schema(json!({"cursor": {"type": "string"}})));
        assert_eq!(
            (named.style, named.confidence),
            (PagingStyle::Cursor, Confidence::Medium)
        );
        let opaque = summarize(&schema(json!({"offset": {"type": "string"}})));
        assert_eq!(
            (opaque.style, opaque.confidence),
            (PagingStyle::Cursor, Confidence::Low)
        );
        assert_eq!(opaque.parameters.cursor.as_deref(), Some("offset"));
    }

    #[test]
    fn p13_a_hint_decides_and_is_declared() {
        let mut s = schema(json!({"n": {"type": "integer"}, "pos": {"type": "string"}}));
        s[PAGINATION_HINT] = json!({"size": "n", "cursor": "pos"});
        let out = summarize(&s);
        assert_eq!(out.source, PagingSource::Hint);
        assert_eq!(out.confidence, Confidence::Declared);
        assert_eq!(out.style, PagingStyle::Cursor);
        assert_eq!(out.hint, Some(json!({"size": "n", "cursor": "pos"})));
        s[PAGINATION_HINT] = json!({"disabled": true});
        assert_eq!(summarize(&s).style, PagingStyle::None);
    }

    #[test]
    fn p13_body_fields_are_named_with_their_prefix_and_no_parameters_is_none() {
        let s = summarize(&schema(json!({"body": {"type": "object", "properties": {
            "pageSize": {"type": "integer"}, "page": {"type": "integer"}}}})));
        assert_eq!(s.parameters.size.as_deref(), Some("body.pageSize"));
        assert_eq!(s.style, PagingStyle::Page);
        let none = summarize(&schema(json!({"q": {"type": "string"}})));
        assert_eq!(
            (none.style, none.confidence),
            (PagingStyle::None, Confidence::High)
        );
        assert_eq!(summarize(&json!({})).style, PagingStyle::None);
    }
}
