//! D4: deleting a connection revokes its token at the authorization server (RFC 7009)
//! when the server has a revocation endpoint (configured or discovered) — the refresh
//! token when there is one, which ends the grant, else the access token. The connection
//! is deleted whatever the server says; what revocation did is returned (and logged).

use secrecy::ExposeSecret;

use crate::call::app_connections::secret_aad;
use crate::call::{Runtime, RuntimeError};
use crate::store::connections;
use crate::store::providers;
use crate::store::OrgId;
use crate::upstream::oauth::{Revocation, Tokens};

impl Runtime {
    /// Revokes the connection's token where possible, then deletes it; `NotFound` when
    /// the org has no such connection.
    pub async fn delete_connection(
        &self,
        org: &OrgId,
        id: &str,
    ) -> Result<Option<Revocation>, RuntimeError> {
        let Some(doomed) = connections::doomed(&self.pool, org, id).await? else {
            return Err(RuntimeError::NotFound("connection"));
        };
        let revocation = if doomed.kind == "oauth2" {
            Some(self.revoke(org, &doomed).await)
        } else {
            None
        };
        connections::delete(&self.pool, org, id).await?;
        crate::call::agent_memory::bump(self.kv(), org).await;
        Ok(revocation)
    }

    async fn revoke(&self, org: &OrgId, doomed: &connections::Doomed) -> Revocation {
        let attempt = async {
            let aad = secret_aad(org, &doomed.user_id, &doomed.toolkit);
            let plain = self.unseal(&doomed.secret_ciphertext.0, &aad)?;
            let tokens: Tokens = serde_json::from_str(plain.expose_secret())
                .map_err(|e| RuntimeError::Internal(e.into()))?;
            let provider = providers::get(&self.pool, org, &doomed.provider_id).await?;
            let secret = self.client_secret(org, &doomed.provider_id).await?;
            let app = self
                .oauth_app(&provider, secret)
                .await
                .map_err(|e| RuntimeError::Upstream(e.to_string()))?;
            let (token, hint) = match &tokens.refresh_token {
                Some(rt) => (rt.as_str(), "refresh_token"),
                None => (tokens.access_token.as_str(), "access_token"),
            };
            self.oauth
                .revoke(&app, token, hint)
                .await
                .map_err(|e| RuntimeError::Upstream(e.to_string()))
        };
        match attempt.await {
            Ok(r) => {
                tracing::info!(toolkit = %doomed.toolkit, revocation = r.as_str(), "connection deleted");
                r
            }
            Err(e) => {
                tracing::warn!(toolkit = %doomed.toolkit, error = %e, "the connection's token could not be revoked; the connection is deleted");
                Revocation::Failed
            }
        }
    }
}
