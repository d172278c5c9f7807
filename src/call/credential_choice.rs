//! Which credential a call sends: the runtime token's own, the org's, or the caller's
//! connection of a connected-app toolkit (D4). Org credentials are stored sealed to their provider id and
//! opened only when sent.

use secrecy::SecretString;

pub use crate::walk::credential::Credential;

use crate::auth::Caller;
use crate::call::{BoundTool, Runtime, RuntimeError};
use crate::store::providers::{self, CredentialBinding};
use crate::store::tools::ToolKind;

impl Runtime {
    /// The credential for this call: the token's own for the provider, else the org's,
    /// unless the provider requires users' own credentials.
    pub(crate) async fn credential(
        &self,
        caller: &Caller,
        bound: &BoundTool,
    ) -> Result<Credential, RuntimeError> {
        if bound.tool.kind == ToolKind::App {
            return self.connection_credential(caller, bound).await;
        }
        if let Caller::Runtime(r) = caller {
            if let Some(user) = r.credentials.get(&bound.provider.id) {
                let now = bound.provider.credential_binding();
                if !CredentialBinding::allows(user.binding.as_ref(), now.as_ref()) {
                    return Err(RuntimeError::CredentialRequired(format!(
                        "provider '{}' has moved to another origin or auth placement since this runtime \
                         token was minted, so the user's credential in it is not sent there: mint a new \
                         token with the user's credential for provider {}",
                        bound.provider.name, bound.provider.id
                    )));
                }
                return Ok(Credential::User(user.secret.clone()));
            }
        }
        if bound.provider.user_credentials_required {
            return Err(RuntimeError::CredentialRequired(format!(
                "provider '{}' needs the user's own credential, and this call carries none: the application \
                 must mint a runtime token with credentials for provider {}",
                bound.provider.name, bound.provider.id
            )));
        }
        // read with the agent (this call's statement), opened only now
        let org = match &bound.org_credential {
            Some(sealed) => Some(self.open_org_credential(&sealed.0, &bound.provider.id)?),
            None => None,
        };
        Ok(Credential::Org(org))
    }

    /// The provider's org-level credential, decrypted, if one is stored.
    pub async fn org_credential(
        &self,
        org: &crate::store::OrgId,
        provider_id: &str,
    ) -> Result<Option<SecretString>, RuntimeError> {
        let Some(sealed) = providers::credential_ciphertext(&self.pool, org, provider_id).await?
        else {
            return Ok(None);
        };
        Ok(Some(self.open_org_credential(&sealed, provider_id)?))
    }

    /// A provider's org-level credential, sealed to its provider id.
    fn open_org_credential(
        &self,
        sealed: &[u8],
        provider_id: &str,
    ) -> Result<SecretString, RuntimeError> {
        self.unseal(sealed, provider_id.as_bytes())
    }
}
