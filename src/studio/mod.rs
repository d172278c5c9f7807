//! Studio operations that carry business rules, with no HTTP types: handlers in `api`
//! extract, call one function here and map its [`StudioError`]. Simple CRUD stays a
//! store call from its handler.

pub mod placement;
pub mod providers;
pub mod toolkits;
pub mod validate;

use crate::store::StoreError;

/// Why a Studio operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum StudioError {
    /// The input breaks a rule (the message names the field and the rule).
    #[error("{0}")]
    Invalid(String),
    /// The change conflicts with what exists.
    #[error("{0}")]
    Conflict(String),
    /// The change sends a stored secret somewhere new: it must be sent again.
    #[error("{0}")]
    CredentialRequired(String),
    /// The object is not in this org.
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl StudioError {
    /// Maps a store error to [`StudioError::NotFound`] naming the object when it was not
    /// found.
    pub fn not_found(what: &'static str) -> impl FnOnce(StoreError) -> StudioError {
        move |e| match e {
            StoreError::NotFound => StudioError::NotFound(what),
            other => StudioError::Store(other),
        }
    }
}
