//! Every stable error code loopgate answers with, in one table: its snake_case `code`
//! (the problem document's and the model's), its HTTP status and its title. The engine's,
//! the runtime's and the API's errors each say which code they are; nothing else maps an
//! error to a status. A problem's `type` is derived from its code ([`ErrorCode::type_uri`]).

macro_rules! error_codes {
    ($($(#[$doc:meta])* $name:ident => ($code:literal, $status:literal, $title:literal),)*) => {
        /// One row of the table; see the module documentation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $name,)*
        }

        impl ErrorCode {
            /// Every row, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name,)*];

            /// The stable snake_case code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $code,)*
                }
            }

            /// The HTTP status of a problem with this code.
            pub fn status(self) -> u16 {
                match self {
                    $(ErrorCode::$name => $status,)*
                }
            }

            /// The problem's title when the error is not a tool call's.
            pub fn title(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $title,)*
                }
            }
        }
    };
}

error_codes! {
    // authentication and authorization
    Unauthorized => ("unauthorized", 401, "Unauthorized"),
    Forbidden => ("forbidden", 403, "Forbidden"),
    // requests
    NotFound => ("not_found", 404, "Not found"),
    /// A body that is not well-formed.
    Malformed => ("validation_failed", 400, "Validation failed"),
    /// A well-formed body that breaks a rule.
    ValidationFailed => ("validation_failed", 422, "Validation failed"),
    Conflict => ("conflict", 409, "Conflict"),
    /// A request body over a configured size; the detail names the limit and its setting.
    PayloadTooLarge => ("payload_too_large", 413, "Payload too large"),
    CredentialRequired => ("credential_required", 409, "Credential required"),
    MethodNotAllowed => ("method_not_allowed", 405, "Method not allowed"),
    RateLimited => ("rate_limited", 429, "Too many requests"),
    Unavailable => ("unavailable", 503, "Service unavailable"),
    InternalError => ("internal_error", 500, "Internal server error"),
    // tool calls (E1–E5, G4–G6, D1–D3): details are written for the model
    InvalidArguments => ("invalid_arguments", 400, "Invalid arguments"),
    ArgumentLimitExceeded => ("argument_limit_exceeded", 400, "Argument limit exceeded"),
    InvalidForEachKey => ("invalid_for_each_key", 400, "Invalid _for_each key"),
    AllPagesUnsupported => ("all_pages_unsupported", 400, "Paging not supported"),
    UpstreamFailed => ("upstream_failed", 502, "Upstream failed"),
    ResultNotFound => ("result_not_found", 404, "Result not found"),
    ResultExpired => ("result_expired", 410, "Result expired"),
    RetrievalRequired => ("retrieval_required", 409, "Retrieval required"),
    ToolNotLoaded => ("tool_not_loaded", 409, "Tool not loaded"),
    ConnectRequired => ("connect_required", 409, "Connection required"),
    /// D4: the user's connection is kept, but its token could not be refreshed just now
    /// (the authorization server failed transiently): retry after `Retry-After`.
    ConnectionUnavailable => ("connection_unavailable", 503, "Connection unavailable"),
    // nothing lost under faults (K1, K5)
    /// A call's record whose replica stopped before the call ended (K1).
    CallInterrupted => ("call_interrupted", 503, "Call interrupted"),
    /// A stored result lost with the result store (Redis restarted without it, K5).
    ResultLost => ("result_lost", 410, "Result lost"),
}

impl ErrorCode {
    /// The problem document's `type`.
    pub fn type_uri(self) -> String {
        format!(
            "https://loopgate.dev/problems/{}",
            self.as_str().replace('_', "-")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_snake_case_and_statuses_are_errors() {
        for c in ErrorCode::ALL {
            let s = c.as_str();
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{s}"
            );
            assert!((400..600).contains(&c.status()), "{s}");
        }
    }

    #[test]
    fn one_code_has_one_status_but_validation() {
        for a in ErrorCode::ALL {
            for b in ErrorCode::ALL {
                if a.as_str() == b.as_str() && a != b {
                    assert_eq!(a.as_str(), "validation_failed");
                }
            }
        }
    }
}
