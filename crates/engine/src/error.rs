//! The one error type of the engine. Every variant is a row of the error table
//! ([`ErrorCode`]: its code and status) and a detail written for the model: it says what was
//! wrong and what to send instead, because the runtime hands it to the model verbatim.

use thiserror::Error;

use crate::error_code::ErrorCode;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EngineError {
    /// A reserved argument (or a retrieval tool argument) is malformed.
    #[error("{detail}")]
    InvalidArguments { detail: String },
    /// A list or path in the arguments is past its bound (`Limits`); refused before any
    /// work proportional to it.
    #[error("{detail}")]
    LimitExceeded { detail: String },
    /// `_for_each.key` names no parameter of the tool.
    #[error("{detail}")]
    InvalidForEachKey { detail: String },
    /// `_all_pages` on a tool where no pagination was detected.
    #[error("{detail}")]
    AllPagesUnsupported { detail: String },
    /// The upstream API failed and nothing usable was fetched.
    #[error("{detail}")]
    Upstream { status: Option<u16>, detail: String },
    /// A stored result could not be read (the runtime raises this for unknown ids; the
    /// engine raises it for a stored payload it cannot interpret).
    #[error("{detail}")]
    ResultNotFound { detail: String },
}

impl EngineError {
    /// Which row of the error table ([`ErrorCode`]) this is.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Self::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            Self::LimitExceeded { .. } => ErrorCode::ArgumentLimitExceeded,
            Self::InvalidForEachKey { .. } => ErrorCode::InvalidForEachKey,
            Self::AllPagesUnsupported { .. } => ErrorCode::AllPagesUnsupported,
            Self::Upstream { .. } => ErrorCode::UpstreamFailed,
            Self::ResultNotFound { .. } => ErrorCode::ResultNotFound,
        }
    }

    /// Stable machine-readable code, identical to the API's problem `code`.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// The model-readable explanation.
    pub fn detail(&self) -> &str {
        match self {
            Self::InvalidArguments { detail }
            | Self::LimitExceeded { detail }
            | Self::InvalidForEachKey { detail }
            | Self::AllPagesUnsupported { detail }
            | Self::Upstream { detail, .. }
            | Self::ResultNotFound { detail } => detail,
        }
    }

    /// `invalid_arguments` with this detail (E2): what the model sent cannot be used.
    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::InvalidArguments {
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_snake_case() {
        let all = [
            EngineError::invalid("x"),
            EngineError::LimitExceeded { detail: "x".into() },
            EngineError::InvalidForEachKey { detail: "x".into() },
            EngineError::AllPagesUnsupported { detail: "x".into() },
            EngineError::Upstream {
                status: Some(500),
                detail: "x".into(),
            },
            EngineError::ResultNotFound { detail: "x".into() },
        ];
        let codes: Vec<_> = all.iter().map(EngineError::code).collect();
        assert_eq!(
            codes,
            [
                "invalid_arguments",
                "argument_limit_exceeded",
                "invalid_for_each_key",
                "all_pages_unsupported",
                "upstream_failed",
                "result_not_found"
            ]
        );
        assert!(all
            .iter()
            .all(|e| e.detail() == "x" && e.to_string() == "x"));
    }
}
