//! The challenge of an MCP endpoint's 401 (M2): `WWW-Authenticate` names the endpoint's
//! protected-resource metadata (RFC 9728), for the auth middleware and the MCP handlers
//! alike.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::api::state::AppState;

/// The agent id of an MCP endpoint's path (`/v1/agents/{id}/mcp`), when it is one.
fn mcp_agent_of(path: &str) -> Option<&str> {
    path.strip_prefix("/v1/agents/")?
        .strip_suffix("/mcp")
        .filter(|id| {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// Where the protected-resource metadata (RFC 9728) of an agent's MCP endpoint is.
pub fn metadata_url(public_url: &str, agent: &str) -> String {
    format!("{public_url}/.well-known/oauth-protected-resource/v1/agents/{agent}/mcp")
}

/// A 401 of an MCP endpoint names its protected-resource metadata (RFC 9728), so a
/// client can find out how to authenticate; any other response is left as it is.
pub fn challenge(req: &HttpRequest, res: &mut HttpResponse) {
    if res.status() != actix_web::http::StatusCode::UNAUTHORIZED {
        return;
    }
    let (Some(agent), Some(state)) = (
        mcp_agent_of(req.path()),
        req.app_data::<web::Data<AppState>>(),
    ) else {
        return;
    };
    let value = format!(
        "Bearer resource_metadata=\"{}\"",
        metadata_url(state.runtime.public_url(), agent)
    );
    if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&value) {
        res.headers_mut()
            .insert(actix_web::http::header::WWW_AUTHENTICATE, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m2_mcp_paths_name_their_agent() {
        assert_eq!(mcp_agent_of("/v1/agents/agt_1-x/mcp"), Some("agt_1-x"));
        assert_eq!(mcp_agent_of("/v1/agents/a/b/mcp"), None);
        assert_eq!(mcp_agent_of("/v1/agents/a\"b/mcp"), None);
        assert_eq!(mcp_agent_of("/v1/agents/a/steps"), None);
        assert_eq!(
            metadata_url("https://g.example", "agt_1"),
            "https://g.example/.well-known/oauth-protected-resource/v1/agents/agt_1/mcp"
        );
    }
}
