//! `RuntimeError`: why a step or tool call could not be served. Details are written for
//! the model (the runtime client hands them over verbatim) and never hold a credential.

use std::time::Duration;

use crate::store::StoreError;
use loopgate_engine::{EngineError, ErrorCode};

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
    /// D4: the connection is kept but its token could not be refreshed just now.
    #[error("{0}")]
    ConnectionUnavailable(String),
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
    /// Which row of the error table this is.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            RuntimeError::NotFound(_) => ErrorCode::NotFound,
            RuntimeError::Forbidden(_) => ErrorCode::Forbidden,
            RuntimeError::Engine(e) => e.error_code(),
            RuntimeError::UnknownTool(_) => ErrorCode::InvalidArguments,
            RuntimeError::RetrievalRequired(_) => ErrorCode::RetrievalRequired,
            RuntimeError::CredentialRequired(_) => ErrorCode::CredentialRequired,
            RuntimeError::ToolNotLoaded(_) => ErrorCode::ToolNotLoaded,
            RuntimeError::ConnectRequired(_) => ErrorCode::ConnectRequired,
            RuntimeError::ConnectionUnavailable(_) => ErrorCode::ConnectionUnavailable,
            RuntimeError::Result(ResultError::Expired(..)) => ErrorCode::ResultExpired,
            RuntimeError::Result(ResultError::NotFound(_)) => ErrorCode::ResultNotFound,
            RuntimeError::Result(ResultError::Lost(_)) => ErrorCode::ResultLost,
            RuntimeError::Result(ResultError::Unreachable(_)) => ErrorCode::Unavailable,
            RuntimeError::Result(ResultError::Store(_)) | RuntimeError::Kv(_) => {
                ErrorCode::Unavailable
            }
            RuntimeError::RateLimited { .. } => ErrorCode::RateLimited,
            RuntimeError::Upstream(_) => ErrorCode::UpstreamFailed,
            RuntimeError::Draining => ErrorCode::Unavailable,
            RuntimeError::Store(StoreError::NotFound) => ErrorCode::NotFound,
            RuntimeError::Store(StoreError::Unavailable(_)) => ErrorCode::Unavailable,
            RuntimeError::Store(_) | RuntimeError::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// Stable code and HTTP status of the problem document (from the error table).
    pub fn code_status(&self) -> (&'static str, u16) {
        let code = self.error_code();
        (code.as_str(), code.status())
    }
}
