//! `RuntimeError`: why a step or tool call could not be served. Details are written for
//! the model (the runtime client hands them over verbatim) and never hold a credential.

use std::time::Duration;

use crate::store::StoreError;
use loopgate_engine::EngineError;

use crate::kv::KvError;
use crate::results::stored_results::ResultError;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Engine(#[from] EngineError),
    #[error("{0}")]
    UnknownTool(String),
    #[error("{0}")]
    RetrievalRequired(String),
    #[error("{0}")]
    CredentialRequired(String),
    /// D1: a pooled tool called before `load_tool`.
    #[error("{0}")]
    ToolNotLoaded(String),
    /// D3: a connected-app tool of a toolkit the user has not connected.
    #[error("{0}")]
    ConnectRequired(String),
    #[error("{0}")]
    Result(#[from] ResultError),
    #[error("{detail}")]
    RateLimited {
        detail: String,
        retry_after: Duration,
    },
    #[error("{0}")]
    Upstream(String),
    /// This replica is shutting down: retry (another replica will answer).
    #[error("this replica is shutting down and takes no new calls; retry shortly")]
    Draining,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Kv(#[from] KvError),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl RuntimeError {
    /// Stable code and HTTP status of the problem document.
    pub fn code_status(&self) -> (&'static str, u16) {
        match self {
            RuntimeError::NotFound(_) => ("not_found", 404),
            RuntimeError::Forbidden(_) => ("forbidden", 403),
            RuntimeError::Engine(e) => (e.code(), e.http_status()),
            RuntimeError::UnknownTool(_) => ("invalid_arguments", 400),
            RuntimeError::RetrievalRequired(_) => ("retrieval_required", 409),
            RuntimeError::CredentialRequired(_) => ("credential_required", 409),
            RuntimeError::ToolNotLoaded(_) => ("tool_not_loaded", 409),
            RuntimeError::ConnectRequired(_) => ("connect_required", 409),
            RuntimeError::Result(ResultError::Expired(..)) => ("result_expired", 410),
            RuntimeError::Result(ResultError::NotFound(_)) => ("result_not_found", 404),
            RuntimeError::Result(ResultError::Store(_)) | RuntimeError::Kv(_) => {
                ("unavailable", 503)
            }
            RuntimeError::RateLimited { .. } => ("rate_limited", 429),
            RuntimeError::Upstream(_) => ("upstream_failed", 502),
            RuntimeError::Draining => ("unavailable", 503),
            RuntimeError::Store(StoreError::NotFound) => ("not_found", 404),
            RuntimeError::Store(StoreError::Unavailable(_)) => ("unavailable", 503),
            RuntimeError::Store(_) | RuntimeError::Internal(_) => ("internal_error", 500),
        }
    }
}
