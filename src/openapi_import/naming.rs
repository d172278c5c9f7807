//! Tool names, argument (property) names and tool descriptions.
//!
//! Tool names must be valid function names for every LLM API we serve, hence
//! `[A-Za-z0-9_-]{1,64}`. Top-level argument names follow the strictest provider
//! rule we know (`^[A-Za-z0-9_.-]{1,64}$` for property keys), so a parameter like
//! Microsoft Graph's `$top` becomes `top` and keeps its real name in
//! `x-loopgate-name`.

use std::collections::HashSet;

/// Longest tool or argument name.
pub(crate) const MAX_NAME: usize = 64;
/// Longest tool description, in characters.
pub(crate) const MAX_DESCRIPTION: usize = 1024;

/// Names the runtime serves itself; an imported operation never takes them.
const RESERVED: &[&str] = &[
    "queryToolResult",
    "fetchToolResult",
    "search_tools",
    "load_tool",
    "list_connections",
    "connect_toolkit",
];

/// Replaces each run of characters outside the allowed set by one `_`, trims `_`
/// at both ends and cuts to `max` bytes (the result is ASCII).
fn clean(raw: &str, allowed: impl Fn(char) -> bool, max: usize) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if allowed(c) {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    let mut cut = trimmed[..trimmed.len().min(max)].to_string();
    while cut.ends_with('_') {
        cut.pop();
    }
    cut
}

fn tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn property_char(c: char) -> bool {
    tool_char(c) || c == '.'
}

/// The base name of an operation: its sanitized `operationId`, else
/// `<method>_<path segments>` (`get_repos_owner_repo_issues`).
pub(crate) fn base_tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    if let Some(id) = operation_id {
        let name = clean(id, tool_char, MAX_NAME);
        if !name.is_empty() {
            return name;
        }
    }
    let derived = format!("{}_{}", method.to_ascii_lowercase(), path);
    let name = clean(&derived, tool_char, MAX_NAME);
    if name.is_empty() {
        "operation".into()
    } else {
        name
    }
}

/// An argument name for a parameter; `None` when nothing usable is left.
pub(crate) fn property_name(raw: &str) -> Option<String> {
    let name = clean(raw, property_char, MAX_NAME);
    (!name.is_empty()).then_some(name)
}

/// Hands out unique names: the first claim of a name gets it, later ones get
/// `_2`, `_3`, … (cut so the result still fits in [`MAX_NAME`]).
pub(crate) struct UniqueNames {
    taken: HashSet<String>,
}

impl UniqueNames {
    pub(crate) fn new() -> Self {
        Self {
            taken: HashSet::new(),
        }
    }

    /// Tool names: the runtime's own tool names count as taken.
    pub(crate) fn for_tools() -> Self {
        Self {
            taken: RESERVED.iter().map(|s| s.to_string()).collect(),
        }
    }

    pub(crate) fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    pub(crate) fn claim(&mut self, base: &str) -> String {
        let mut candidate = base.to_string();
        let mut n = 2usize;
        while self.taken.contains(&candidate) {
            let suffix = format!("_{n}");
            let keep = base.len().min(MAX_NAME - suffix.len());
            candidate = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

/// The tool description: summary and description (the description alone when it
/// already starts with the summary), else `METHOD path`; `(deprecated)` first
/// when the operation is; at most [`MAX_DESCRIPTION`] characters.
pub(crate) fn description(
    summary: Option<&str>,
    detail: Option<&str>,
    method: &str,
    path: &str,
    deprecated: bool,
) -> String {
    let summary = summary.map(strip_html);
    let summary = summary.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let detail = detail.map(strip_html);
    let detail = detail.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let text = match (summary, detail) {
        (Some(s), Some(d)) if d.starts_with(s.trim_end_matches('.')) => d.to_string(),
        (Some(s), Some(d)) => {
            let sep = if s.ends_with(['.', '!', '?', ':']) {
                " "
            } else {
                ". "
            };
            format!("{s}{sep}{d}")
        }
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => format!("{method} {path}"),
    };
    let text = if deprecated {
        format!("(deprecated) {text}")
    } else {
        text
    };
    truncate(&text, MAX_DESCRIPTION)
}

/// HTML tags that break a text into blocks, and ones that only style it.
const BLOCK_TAGS: &[&str] = &[
    "p", "br", "div", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
];
const INLINE_TAGS: &[&str] = &[
    "a", "code", "strong", "em", "b", "i", "span", "pre", "tbody", "thead", "td", "th",
];

/// Removes the common HTML tags some documents (Stripe's) write descriptions in;
/// anything else in angle brackets (`<https://…>`, `a < b`) is kept.
fn strip_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let tag = after
            .find('>')
            .map(|close| &after[..close])
            .filter(|inner| !inner.contains('<'));
        let name = tag.map(|inner| {
            inner
                .trim_start_matches('/')
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase()
        });
        match (tag, name) {
            (Some(inner), Some(name)) if BLOCK_TAGS.contains(&name.as_str()) => {
                out.push('\n');
                rest = &after[inner.len() + 1..];
            }
            (Some(inner), Some(name)) if INLINE_TAGS.contains(&name.as_str()) => {
                rest = &after[inner.len() + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    // Tags leave blank-line runs behind; keep at most one empty line.
    let mut tidy = String::with_capacity(out.len());
    for line in out.lines().map(str::trim_end) {
        if line.is_empty() && (tidy.is_empty() || tidy.ends_with("\n\n")) {
            continue;
        }
        tidy.push_str(line);
        tidy.push('\n');
    }
    tidy.trim().to_string()
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use super::*;

    #[test]
    fn tool_names_from_operation_ids_or_paths() {
        assert_eq!(
            base_tool_name(Some("users.user.ListUser"), "GET", "/users"),
            "users_user_ListUser"
        );
        assert_eq!(
            base_tool_name(Some("GetCustomers"), "GET", "/x"),
            "GetCustomers"
        );
        assert_eq!(
            base_tool_name(Some("issues/list-for-repo"), "GET", "/x"),
            "issues_list-for-repo"
        );
        assert_eq!(
            base_tool_name(None, "GET", "/repos/{owner}/{repo}/issues"),
            "get_repos_owner_repo_issues"
        );
        assert_eq!(
            base_tool_name(Some("  ..  "), "DELETE", "/users/{user-id}"),
            "delete_users_user-id"
        );
        assert_eq!(base_tool_name(None, "GET", "/"), "get");
        let long = "a".repeat(100);
        assert_eq!(base_tool_name(Some(&long), "GET", "/").len(), MAX_NAME);
    }

    #[test]
    fn names_are_unique_and_avoid_reserved_ones() {
        let mut names = UniqueNames::for_tools();
        assert_eq!(names.claim("list"), "list");
        assert_eq!(names.claim("list"), "list_2");
        assert_eq!(names.claim("list_2"), "list_2_2");
        assert_eq!(names.claim("list"), "list_3");
        assert_eq!(names.claim("search_tools"), "search_tools_2");
        let long = "b".repeat(MAX_NAME);
        names.claim(&long);
        let second = names.claim(&long);
        assert_eq!(second.len(), MAX_NAME);
        assert!(second.ends_with("b_2"));
    }

    #[test]
    fn property_names() {
        assert_eq!(property_name("$top").as_deref(), Some("top"));
        assert_eq!(property_name("user-id").as_deref(), Some("user-id"));
        assert_eq!(
            property_name("created[gte]").as_deref(),
            Some("created_gte")
        );
        assert_eq!(property_name("@odata.type").as_deref(), Some("odata.type"));
        assert_eq!(property_name("$$"), None);
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            description(
                Some("List issues"),
                Some("Lists issues of a repo."),
                "GET",
                "/i",
                false
            ),
            "List issues. Lists issues of a repo."
        );
        assert_eq!(
            description(
                Some("List users."),
                Some("List users. Paged."),
                "GET",
                "/u",
                false
            ),
            "List users. Paged."
        );
        assert_eq!(
            description(None, None, "GET", "/u", true),
            "(deprecated) GET /u"
        );
        assert_eq!(
            description(
                None,
                Some("<p>Returns a <a href=\"/x\">list</a> of <code>customers</code>.</p><p>Newest first.</p>"),
                "GET",
                "/c",
                false
            ),
            "Returns a list of customers.\n\nNewest first."
        );
        assert_eq!(
            description(Some("Use <https://x.test>; a < b"), None, "GET", "/", false),
            "Use <https://x.test>; a < b"
        );
        let long = "é".repeat(2000);
        let cut = description(Some(&long), None, "GET", "/", false);
        assert_eq!(cut.chars().count(), MAX_DESCRIPTION);
        assert!(cut.ends_with('…'));
    }
}
