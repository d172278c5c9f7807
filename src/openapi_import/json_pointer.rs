//! JSON Pointer tokens of a local `$ref` (RFC 6901 escapes undone), shared by reference
//! resolution and by error locations.

use std::borrow::Cow;

/// The unescaped tokens of a local reference (`#/a/b~1c` gives `a`, `b/c`), or
/// `None` when the reference is not local.
pub(crate) fn pointer_tokens(reference: &str) -> Option<impl Iterator<Item = Cow<'_, str>>> {
    let fragment = reference.strip_prefix('#')?;
    let rest = match fragment.strip_prefix('/') {
        Some(rest) => Some(rest),
        None if fragment.is_empty() => None,
        None => return None,
    };
    Some(rest.into_iter().flat_map(|r| r.split('/')).map(|t| {
        if t.contains('~') {
            Cow::Owned(t.replace("~1", "/").replace("~0", "~"))
        } else {
            Cow::Borrowed(t)
        }
    }))
}
