//! A presented result with its `_resultId` left as a hole: the text
//! [`present_json`](crate::present_json) wrote, cut wherever the id it was given
//! appears, so the same presentation (same outcome, plan, limits and labels) is handed
//! out again under another id without presenting afresh.
//!
//! Exact for ids of the same length that need no JSON escaping: the presentation writes
//! the id only as whole text (`_resultId`, the notes that name it) and the size guard
//! measures it only by its length, so two such ids give texts that differ only where the
//! id is (a property test in `tests/props.rs` pins this). The id a template is cut at must
//! not occur in the rows themselves: a fresh random `_resultId` made after the rows were
//! stored cannot (it is 32 random characters nobody knew when the rows were written).

use std::sync::Arc;

use crate::present::PresentedJson;

/// [`PresentedJson`] with its `_resultId` as a hole.
#[derive(Debug, Clone, PartialEq)]
pub struct PresentedTemplate {
    /// The text between the holes (one part more than holes); shared, never copied, with
    /// whoever keeps the text once (a call's record references it).
    parts: Arc<[String]>,
    id_len: usize,
    truncated: bool,
    stored: bool,
}

/// Writes the same in a JSON string and in the guard's measure: no escaping, ASCII.
fn plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl PresentedTemplate {
    /// `presented` (made with `result_id`) with the id cut out; `None` when the id could
    /// be written differently in JSON.
    pub fn new(presented: &PresentedJson, result_id: &str) -> Option<Self> {
        if !plain_id(result_id) {
            return None;
        }
        Some(Self {
            parts: presented.json.split(result_id).map(str::to_owned).collect(),
            id_len: result_id.len(),
            truncated: presented.truncated,
            stored: presented.stored,
        })
    }

    /// The presentation under `result_id`; `None` when that id is not as long as the one
    /// the template was made with (the guard could then have cut elsewhere).
    pub fn fill(&self, result_id: &str) -> Option<PresentedJson> {
        if result_id.len() != self.id_len || !plain_id(result_id) {
            return None;
        }
        let mut json = String::with_capacity(self.bytes());
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                json.push_str(result_id);
            }
            json.push_str(part);
        }
        Some(PresentedJson {
            json,
            truncated: self.truncated,
            stored: self.stored,
        })
    }

    /// The text between the holes: a filled text is these joined by the id.
    pub fn parts(&self) -> &Arc<[String]> {
        &self.parts
    }

    /// The length of a filled text.
    pub fn bytes(&self) -> usize {
        let holes = self.parts.len().saturating_sub(1);
        self.parts.iter().map(String::len).sum::<usize>() + holes * self.id_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presented(json: &str) -> PresentedJson {
        PresentedJson {
            json: json.into(),
            truncated: true,
            stored: true,
        }
    }

    #[test]
    fn the_id_is_spliced_wherever_it_was_and_only_at_its_length() {
        let p = presented(r#"{"_note":"read res_ab with …","_resultId":"res_ab"}"#);
        let t = PresentedTemplate::new(&p, "res_ab").unwrap();
        let filled = t.fill("res_xy").unwrap();
        assert_eq!(
            filled.json,
            r#"{"_note":"read res_xy with …","_resultId":"res_xy"}"#
        );
        assert!(filled.truncated && filled.stored);
        assert_eq!(t.bytes(), p.json.len());
        assert_eq!(t.fill("res_abc"), None, "another length: present afresh");
        assert_eq!(t.fill("res_\"y"), None);
        assert_eq!(PresentedTemplate::new(&p, "a\"b"), None);
        assert_eq!(PresentedTemplate::new(&p, ""), None);
        // no id in the text: the text as it is
        let none = PresentedTemplate::new(&presented("[1,2]"), "res_zz").unwrap();
        assert_eq!(none.fill("res_qq").unwrap().json, "[1,2]");
    }
}
