//! `ApiError` and its RFC 9457 problem+json body. Its code and status come from the one
//! error table (`loopgate_engine::ErrorCode`); a 5xx logs its cause chain and shows none of it.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::store::StoreError;
use loopgate_engine::ErrorCode;

/// An RFC 9457 problem document with loopgate's stable `code`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Stable snake_case code, e.g. `validation_failed`, `not_found`.
    pub code: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// 400 for a body that is not well-formed, 422 for one that breaks a rule.
    #[error("{detail}")]
    Validation { status: u16, detail: String },
    #[error("{0}")]
    Conflict(String),
    /// 413: a body over a configured size; the detail names the limit and its setting.
    #[error("{0}")]
    TooLarge(String),
    /// 409: the change needs the credential re-entered (it is bound to an origin and an
    /// auth placement).
    #[error("{0}")]
    CredentialRequired(String),
    /// A known path called with a method it does not serve; carries the `Allow` value.
    #[error("this endpoint only answers {0}")]
    MethodNotAllowed(String),
    #[error("{detail}")]
    RateLimited {
        detail: String,
        retry_after_secs: u64,
    },
    #[error("{detail}")]
    Unavailable {
        detail: String,
        retry_after_secs: u64,
    },
    /// A tool-call error whose detail is written for the model (the runtime routes'
    /// problem responses in `openapi/openapi.json` list its codes).
    #[error("{detail}")]
    Tool { code: ErrorCode, detail: String },
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    pub fn invalid(detail: impl Into<String>) -> Self {
        ApiError::Validation {
            status: 422,
            detail: detail.into(),
        }
    }
    pub fn malformed(detail: impl Into<String>) -> Self {
        ApiError::Validation {
            status: 400,
            detail: detail.into(),
        }
    }
    /// 413 for a body over `limit` bytes, the cap set by `setting` (its environment
    /// variable is `LOOPGATE_<SETTING>`).
    pub fn too_large(limit: usize, setting: &str) -> Self {
        ApiError::TooLarge(format!(
            "the body is larger than {limit} bytes, the limit set by `{setting}` \
             (environment variable LOOPGATE_{})",
            setting.to_ascii_uppercase()
        ))
    }
    pub fn not_found(what: &str) -> Self {
        ApiError::NotFound(format!("{what} not found"))
    }

    /// Which row of the error table this is.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            ApiError::Unauthorized(_) => ErrorCode::Unauthorized,
            ApiError::Forbidden(_) => ErrorCode::Forbidden,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Validation { status: 400, .. } => ErrorCode::Malformed,
            ApiError::Validation { .. } => ErrorCode::ValidationFailed,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::TooLarge(_) => ErrorCode::PayloadTooLarge,
            ApiError::CredentialRequired(_) => ErrorCode::CredentialRequired,
            ApiError::MethodNotAllowed(_) => ErrorCode::MethodNotAllowed,
            ApiError::RateLimited { .. } => ErrorCode::RateLimited,
            ApiError::Unavailable { .. } => ErrorCode::Unavailable,
            ApiError::Tool { code, .. } => *code,
            ApiError::Internal(_) => ErrorCode::InternalError,
        }
    }

    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// A tool call's problems share one title: their `code` and `detail` say the rest.
    fn title(&self) -> &'static str {
        match self {
            ApiError::Tool { .. } => "Tool call failed",
            other => other.error_code().title(),
        }
    }

    pub fn problem(&self) -> Problem {
        let code = self.code();
        let detail = match self {
            ApiError::Internal(_) => "an internal error occurred; it has been logged".to_string(),
            other => other.to_string(),
        };
        Problem {
            kind: self.error_code().type_uri(),
            title: self.title().into(),
            status: self.status_code().as_u16(),
            detail,
            code: code.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::NotFound("not found".into()),
            StoreError::Conflict(m) => ApiError::Conflict(m),
            StoreError::Invalid(m) => ApiError::invalid(m),
            StoreError::Unavailable(e) => {
                tracing::warn!(error = format!("{e:#}"), "database unavailable");
                ApiError::Unavailable {
                    detail: "the database is unavailable; retry after the indicated delay".into(),
                    retry_after_secs: 5,
                }
            }
            StoreError::Database(e) => {
                ApiError::Internal(anyhow::Error::new(e).context("database"))
            }
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.error_code().status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(e) = self {
            tracing::error!(error = format!("{e:#}"), "internal error");
        }
        let mut res = HttpResponse::build(self.status_code());
        res.insert_header((header::CONTENT_TYPE, "application/problem+json"));
        match self {
            ApiError::RateLimited {
                retry_after_secs, ..
            }
            | ApiError::Unavailable {
                retry_after_secs, ..
            } => {
                res.insert_header((header::RETRY_AFTER, retry_after_secs.max(&1).to_string()));
            }
            ApiError::Tool {
                code: ErrorCode::ConnectionUnavailable,
                ..
            } => {
                res.insert_header((
                    header::RETRY_AFTER,
                    crate::call::app_connections::CONNECTION_RETRY_AFTER_SECS.to_string(),
                ));
            }
            ApiError::Unauthorized(_) => {
                res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            ApiError::MethodNotAllowed(allow) => {
                res.insert_header((header::ALLOW, allow.as_str()));
            }
            _ => {}
        }
        res.body(serde_json::to_string(&self.problem()).unwrap_or_default())
    }
}

impl From<crate::studio::StudioError> for ApiError {
    fn from(e: crate::studio::StudioError) -> Self {
        use crate::studio::StudioError;
        match e {
            StudioError::Invalid(m) => ApiError::invalid(m),
            StudioError::Conflict(m) => ApiError::Conflict(m),
            StudioError::CredentialRequired(m) => ApiError::CredentialRequired(m),
            StudioError::NotFound(what) => ApiError::not_found(what),
            StudioError::Store(s) => s.into(),
        }
    }
}

/// Maps a store error to a 404 naming the object when it was not found.
pub fn or_not_found(what: &'static str) -> impl FnOnce(StoreError) -> ApiError {
    move |e| match e {
        StoreError::NotFound => ApiError::not_found(what),
        other => other.into(),
    }
}
