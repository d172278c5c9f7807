//! The import's error type and the document locations its messages point at.
//!
//! Every message names where in the document the problem is, in the dotted form
//! `paths./users/{id}.get.parameters[1]`, so it can go straight into a
//! `validation_failed` problem+json `detail`.

use std::fmt;

use super::json_pointer;

/// Why an OpenAPI document could not be imported. The import is all or nothing:
/// any of these means no tool was produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The bytes are not a JSON or YAML document.
    #[error("document is not valid {format}: {message}")]
    Syntax {
        format: &'static str,
        message: String,
    },
    /// Swagger 2.0, a missing `openapi` field or a version other than 3.0.x/3.1.x.
    #[error("{0}")]
    UnsupportedVersion(String),
    /// A `$ref` that does not start with `#`; other documents are never fetched.
    #[error("{at}: $ref '{reference}' points outside this document; only local '#/…' references are supported and nothing is fetched")]
    RemoteRef { at: String, reference: String },
    /// A local `$ref` whose target is not in the document.
    #[error("{at}: $ref '{reference}' does not resolve")]
    DanglingRef { at: String, reference: String },
    /// A chain of references that only leads back to itself (`A -> B -> A`).
    #[error(
        "{at}: $ref '{reference}' is part of a reference cycle that never reaches a definition"
    )]
    RefCycle { at: String, reference: String },
    /// Anything else that is structurally wrong.
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

impl ImportError {
    pub(crate) fn invalid(at: &Loc<'_>, message: impl Into<String>) -> Self {
        Self::Invalid {
            at: at.to_string(),
            message: message.into(),
        }
    }

    /// Where in the document the problem is, when it is about one place.
    pub fn location(&self) -> Option<&str> {
        match self {
            Self::Syntax { .. } | Self::UnsupportedVersion(_) => None,
            Self::RemoteRef { at, .. }
            | Self::DanglingRef { at, .. }
            | Self::RefCycle { at, .. }
            | Self::Invalid { at, .. } => Some(at),
        }
    }
}

/// One step of a location.
#[derive(Debug, Clone)]
enum Seg<'a> {
    Root,
    Key(&'a str),
    Pointer(&'a str),
    Index(usize),
}

/// A location in the document, built as a chain of borrows so walking costs no
/// allocation; it is rendered only when an error needs it.
#[derive(Debug, Clone)]
pub(crate) struct Loc<'a> {
    parent: Option<&'a Loc<'a>>,
    seg: Seg<'a>,
}

impl<'a> Loc<'a> {
    pub(crate) const ROOT: Loc<'static> = Loc {
        parent: None,
        seg: Seg::Root,
    };

    /// A fresh root for the target of a `$ref`, rendered from its JSON pointer
    /// (`#/components/schemas/Issue` becomes `components.schemas.Issue`).
    pub(crate) fn of_pointer(reference: &'a str) -> Loc<'a> {
        Loc {
            parent: None,
            seg: Seg::Pointer(reference),
        }
    }

    pub(crate) fn key(&'a self, key: &'a str) -> Loc<'a> {
        Loc {
            parent: Some(self),
            seg: Seg::Key(key),
        }
    }

    pub(crate) fn index(&'a self, index: usize) -> Loc<'a> {
        Loc {
            parent: Some(self),
            seg: Seg::Index(index),
        }
    }
}

impl fmt::Display for Loc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut segs = Vec::new();
        let mut cur = Some(self);
        while let Some(loc) = cur {
            segs.push(&loc.seg);
            cur = loc.parent;
        }
        let mut first = true;
        for seg in segs.into_iter().rev() {
            match seg {
                Seg::Root => continue,
                Seg::Index(i) => write!(f, "[{i}]")?,
                Seg::Key(k) => write!(f, "{}{k}", if first { "" } else { "." })?,
                Seg::Pointer(reference) => {
                    let tokens = json_pointer::pointer_tokens(reference)
                        .into_iter()
                        .flatten();
                    for (i, token) in tokens.enumerate() {
                        write!(f, "{}{token}", if first && i == 0 { "" } else { "." })?;
                    }
                }
            }
            first = false;
        }
        if first {
            f.write_str("(document root)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use super::*;

    #[test]
    fn renders_dotted_paths_with_indices() {
        let paths = Loc::ROOT.key("paths");
        let item = paths.key("/users/{id}");
        let op = item.key("get");
        let params = op.key("parameters");
        let p = params.index(1);
        assert_eq!(p.to_string(), "paths./users/{id}.get.parameters[1]");
        assert_eq!(Loc::ROOT.to_string(), "(document root)");
        let target = Loc::of_pointer("#/components/schemas/a~1b");
        assert_eq!(
            target.key("properties").to_string(),
            "components.schemas.a/b.properties"
        );
    }
}
