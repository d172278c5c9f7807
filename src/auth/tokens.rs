//! Runtime tokens: HS256 JWTs (algorithm pinned; `exp`, `iss`, `aud` required and
//! checked) carrying org, user, optional agent, optional `cache_scope`, and the
//! user's per-provider credentials sealed with the credential key — a token holder
//! can read its claims but never the credentials inside. A token verified once is
//! remembered by this replica until it expires ([`super::verified`]); its expiry is
//! checked on every call ([`expired`]), remembered or not.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::guard::MAX_ENTRIES;
use super::verified::{Remembered, VerifiedTokens};
use super::{RuntimeCaller, UserCredential};
use crate::crypto::{new_id, sha256, Cipher};
use crate::store::providers::CredentialBinding;
use crate::store::OrgId;

pub const DEFAULT_TTL_SECONDS: i64 = 3600;
pub const MAX_TTL_SECONDS: i64 = 24 * 3600;
/// Seconds a token is still accepted past its `exp` (clock skew between replicas).
const LEEWAY_SECONDS: u64 = 5;

/// Whether a token with `exp` is expired at `now` (seconds since the epoch) — jsonwebtoken's
/// rule with our leeway (`exp < now - leeway`), applied by [`TokenService::verify`] to every
/// call, remembered or not.
fn expired(exp: u64, now: u64) -> bool {
    exp.saturating_add(LEEWAY_SECONDS) < now
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    sub: String,
    org: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cs: Option<String>,
    /// Sealed `{provider_id: secret}`, base64url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cred: Option<String>,
    iat: i64,
    exp: i64,
    jti: String,
    /// The API key that minted the token: revoking it revokes the token.
    mk: String,
    /// Never minted here; a token carrying one is checked by jsonwebtoken and not
    /// remembered (its check would depend on the instant).
    #[serde(default, skip_serializing)]
    nbf: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the runtime token is invalid or expired")]
    Invalid,
    #[error("the runtime token could not be signed")]
    Signing,
}

/// What a customer backend asks for when minting.
pub struct MintRequest<'a> {
    pub org: &'a OrgId,
    /// The id of the API key minting the token.
    pub minted_by: &'a str,
    pub user_id: &'a str,
    pub agent_id: Option<&'a str>,
    pub cache_scope: Option<&'a str>,
    pub credentials: &'a HashMap<String, UserCredential>,
    pub ttl_seconds: i64,
}

/// One sealed credential: the secret and its binding (a bare string in tokens minted
/// before bindings were sealed in).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Sealed {
    Bound {
        s: String,
        b: Option<CredentialBinding>,
    },
    Bare(String),
}

pub struct TokenService {
    encoding: EncodingKey,
    decoding: DecodingKey,
    cipher: Cipher,
    issuer: String,
    audience: String,
    /// Tokens verified before, by digest: at most [`MAX_ENTRIES`] (~0.5–1 KB each), the
    /// bound of every per-token memory of `auth`.
    verified: VerifiedTokens,
}

impl TokenService {
    pub fn new(
        signing_key: &[u8],
        cipher: Cipher,
        issuer: &str,
        audience: &str,
    ) -> Result<Self, TokenError> {
        Ok(Self {
            encoding: EncodingKey::from_secret(signing_key).map_err(|_| TokenError::Signing)?,
            decoding: DecodingKey::from_secret(signing_key).map_err(|_| TokenError::Signing)?,
            cipher,
            issuer: issuer.into(),
            audience: audience.into(),
            verified: VerifiedTokens::new(MAX_ENTRIES),
        })
    }

    /// The signed token, its id (`jti`, for revocation) and its expiry.
    pub fn mint(
        &self,
        req: &MintRequest<'_>,
    ) -> Result<(String, String, DateTime<Utc>), TokenError> {
        let now = Utc::now();
        let exp = now + chrono::Duration::seconds(req.ttl_seconds);
        let jti = new_id("rt");
        let cred = if req.credentials.is_empty() {
            None
        } else {
            let plain: HashMap<&str, Sealed> = req
                .credentials
                .iter()
                .map(|(k, v)| {
                    let sealed = Sealed::Bound {
                        s: v.secret.expose_secret().to_string(),
                        b: v.binding.clone(),
                    };
                    (k.as_str(), sealed)
                })
                .collect();
            let json = serde_json::to_vec(&plain).map_err(|_| TokenError::Signing)?;
            Some(
                URL_SAFE_NO_PAD.encode(
                    self.cipher
                        .encrypt(&json, aad(req.org.as_str(), &jti).as_bytes()),
                ),
            )
        };
        let claims = Claims {
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub: req.user_id.into(),
            org: req.org.as_str().into(),
            agt: req.agent_id.map(Into::into),
            cs: req.cache_scope.map(Into::into),
            cred,
            iat: now.timestamp(),
            exp: exp.timestamp(),
            jti,
            mk: req.minted_by.into(),
            nbf: None,
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|_| TokenError::Signing)?;
        let expires_at = DateTime::from_timestamp(claims.exp, 0).unwrap_or(exp);
        Ok((token, claims.jti, expires_at))
    }

    /// The caller a valid, unexpired token names. Liveness (the token or its minting key
    /// revoked) is not checked here: `auth::guard` and the extractor do, on every call.
    pub fn verify(&self, token: &str) -> Result<RuntimeCaller, TokenError> {
        self.verify_at(token, jsonwebtoken::get_current_timestamp())
    }

    /// [`TokenService::verify`] at `now`, seconds since the epoch (jsonwebtoken's clock).
    fn verify_at(&self, token: &str, now: u64) -> Result<RuntimeCaller, TokenError> {
        let digest = sha256(token.as_bytes());
        match self.verified.get(&digest, |exp| expired(exp, now)) {
            Remembered::Valid(caller) => return Ok(caller),
            Remembered::Expired => return Err(TokenError::Invalid),
            Remembered::Unknown => {}
        }
        let (caller, exp, remember) = self.decode(token)?;
        if expired(exp, now) {
            return Err(TokenError::Invalid);
        }
        if remember {
            self.verified.keep(digest, &caller, exp);
        }
        Ok(caller)
    }

    /// The token checked in full (signature, claims, expiry at jsonwebtoken's instant)
    /// and its credentials opened; with its `exp` and whether it may be remembered.
    fn decode(&self, token: &str) -> Result<(RuntimeCaller, u64, bool), TokenError> {
        let mut v = Validation::new(Algorithm::HS256);
        v.set_issuer(&[&self.issuer]);
        v.set_audience(&[&self.audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.validate_nbf = true;
        v.leeway = LEEWAY_SECONDS;
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &v)
            .map_err(|_| TokenError::Invalid)?;
        let c = data.claims;
        if c.mk.is_empty() || c.jti.is_empty() {
            return Err(TokenError::Invalid);
        }
        let exp = u64::try_from(c.exp).map_err(|_| TokenError::Invalid)?;
        let credentials = match &c.cred {
            None => HashMap::new(),
            Some(sealed) => {
                let raw = URL_SAFE_NO_PAD
                    .decode(sealed)
                    .map_err(|_| TokenError::Invalid)?;
                let plain = self
                    .cipher
                    .decrypt(&raw, aad(&c.org, &c.jti).as_bytes())
                    .map_err(|_| TokenError::Invalid)?;
                let map: HashMap<String, Sealed> =
                    serde_json::from_slice(&plain).map_err(|_| TokenError::Invalid)?;
                map.into_iter()
                    .map(|(k, v)| {
                        let (secret, binding) = match v {
                            Sealed::Bound { s, b } => (s, b),
                            Sealed::Bare(s) => (s, None),
                        };
                        let secret = SecretString::from(secret);
                        (k, UserCredential { secret, binding })
                    })
                    .collect()
            }
        };
        let caller = RuntimeCaller {
            org: OrgId::trusted(c.org),
            user_id: c.sub,
            agent_id: c.agt,
            cache_scope: c.cs,
            credentials,
            token_id: c.jti,
            minted_by: c.mk,
            expires_at: DateTime::from_timestamp(c.exp, 0).unwrap_or_else(Utc::now),
        };
        Ok((caller, exp, c.nbf.is_none()))
    }
}

fn aad(org: &str, jti: &str) -> String {
    format!("runtime-token:{org}:{jti}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(key: &[u8]) -> TokenService {
        TokenService::new(key, Cipher::new(&[3u8; 32]), "loopgate", "loopgate-runtime").unwrap()
    }

    #[test]
    fn mint_verify_and_credentials_are_sealed() {
        let s = service(&[1u8; 32]);
        let org = OrgId::trusted("org_a");
        let mut creds = HashMap::new();
        let binding = CredentialBinding::of(
            "https://api.example.com/v1",
            &crate::store::providers::ProviderAuth {
                kind: crate::store::providers::AuthType::Bearer,
                name: None,
            },
        );
        creds.insert(
            "prv_x".to_string(),
            UserCredential {
                secret: SecretString::from("user-secret-42"),
                binding: binding.clone(),
            },
        );
        let (token, _, _) = s
            .mint(&MintRequest {
                org: &org,
                minted_by: "key_test",
                user_id: "u1",
                agent_id: Some("agt_1"),
                cache_scope: None,
                credentials: &creds,
                ttl_seconds: 60,
            })
            .unwrap();
        let payload = token.split('.').nth(1).unwrap();
        let decoded = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert!(!decoded.contains("user-secret-42"));
        let caller = s.verify(&token).unwrap();
        assert_eq!(caller.user_id, "u1");
        assert_eq!(caller.agent_id.as_deref(), Some("agt_1"));
        assert_eq!(
            caller.credentials["prv_x"].secret.expose_secret(),
            "user-secret-42"
        );
        assert!(binding.is_some());
        assert_eq!(caller.credentials["prv_x"].binding, binding);
        // another signing key, a tampered token, an expired one: all refused
        assert!(service(&[2u8; 32]).verify(&token).is_err());
        assert!(s.verify(&format!("{token}x")).is_err());
        let (old, _, _) = s
            .mint(&MintRequest {
                org: &org,
                minted_by: "key_test",
                user_id: "u1",
                agent_id: None,
                cache_scope: None,
                credentials: &HashMap::new(),
                ttl_seconds: -120,
            })
            .unwrap();
        assert!(s.verify(&old).is_err());
    }

    #[test]
    fn wrong_audience_or_algorithm_refused() {
        let s = service(&[1u8; 32]);
        let other = TokenService::new(&[1u8; 32], Cipher::new(&[3u8; 32]), "loopgate", "elsewhere")
            .unwrap();
        let org = OrgId::trusted("org_a");
        let (token, _, _) = other
            .mint(&MintRequest {
                org: &org,
                minted_by: "key_test",
                user_id: "u",
                agent_id: None,
                cache_scope: None,
                credentials: &HashMap::new(),
                ttl_seconds: 60,
            })
            .unwrap();
        assert!(s.verify(&token).is_err());
        // alg=none token with the same claims
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let body = token.split('.').nth(1).unwrap();
        assert!(s.verify(&format!("{header}.{body}.")).is_err());
    }

    fn minted(s: &TokenService, user: &str, ttl_seconds: i64) -> (String, u64) {
        let org = OrgId::trusted("org_a");
        let (token, _, expires_at) = s
            .mint(&MintRequest {
                org: &org,
                minted_by: "key_test",
                user_id: user,
                agent_id: None,
                cache_scope: None,
                credentials: &HashMap::new(),
                ttl_seconds,
            })
            .unwrap();
        (token, expires_at.timestamp() as u64)
    }

    #[test]
    fn a_remembered_token_expires_at_the_same_instant() {
        let s = service(&[1u8; 32]);
        let (token, exp) = minted(&s, "u1", 600);
        assert_eq!(s.verify(&token).unwrap().user_id, "u1");
        assert_eq!(s.verified.len(), 1, "remembered");
        let last = exp + LEEWAY_SECONDS;
        assert!(s.verify_at(&token, last).is_ok(), "within the leeway");
        assert!(
            s.verify_at(&token, last + 1).is_err(),
            "past it, remembered"
        );
        assert!(s.verify_at(&token, last + 1).is_err(), "and forgotten");
        // not remembered: the same rule at the same instant
        let fresh = service(&[1u8; 32]);
        assert!(fresh.verify_at(&token, last + 1).is_err());
        assert!(fresh.verified.is_empty());
        assert!(fresh.verify_at(&token, last).is_ok());
    }

    #[test]
    fn a_changed_token_is_refused_while_the_original_is_remembered() {
        let s = service(&[1u8; 32]);
        let (token, _) = minted(&s, "u1", 600);
        let (other, _) = minted(&s, "u2", 600);
        assert!(s.verify(&token).is_ok());
        let parts: Vec<&str> = token.split('.').collect();
        let others: Vec<&str> = other.split('.').collect();
        let flip = |p: &str| {
            let mut b = p.as_bytes().to_vec();
            b[p.len() / 2] = if b[p.len() / 2] == b'A' { b'B' } else { b'A' };
            String::from_utf8(b).unwrap()
        };
        for changed in [
            format!("{token}x"),
            format!("{}.{}.{}", parts[0], flip(parts[1]), parts[2]),
            format!("{}.{}.{}", parts[0], parts[1], flip(parts[2])),
            // u2's claims under u1's signature
            format!("{}.{}.{}", parts[0], others[1], parts[2]),
        ] {
            assert!(s.verify(&changed).is_err(), "{changed}");
        }
        assert_eq!(s.verify(&token).unwrap().user_id, "u1");
        assert_eq!(s.verified.len(), 1, "nothing refused is remembered");
    }

    #[test]
    fn the_memory_stays_within_its_bound() {
        let mut s = service(&[1u8; 32]);
        s.verified = VerifiedTokens::new(4);
        for i in 0..20 {
            let (token, _) = minted(&s, &format!("u{i}"), 600);
            assert!(s.verify(&token).is_ok());
            assert!(s.verified.len() <= 4);
        }
    }

    #[test]
    fn a_token_with_nbf_is_checked_in_full_every_time() {
        let s = service(&[1u8; 32]);
        let now = jsonwebtoken::get_current_timestamp();
        let claims = serde_json::json!({"iss": "loopgate", "aud": "loopgate-runtime",
            "sub": "u1", "org": "org_a", "iat": now, "exp": now + 600, "jti": "rt_1",
            "mk": "key_test", "nbf": now - 60});
        let token = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(&[1u8; 32]).unwrap(),
        )
        .unwrap();
        assert!(s.verify(&token).is_ok());
        assert!(s.verified.is_empty());
    }
}
