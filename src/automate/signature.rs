//! Standard Webhooks signatures (W7): a secret is `whsec_` + base64 of 24 random bytes;
//! a message is signed as `v1,` + base64(HMAC-SHA256(secret bytes, "id.timestamp.body")).
//! During a rotation's overlap window both secrets sign, space-separated, so a receiver
//! holding either one verifies the message.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{KeyInit, Mac};
use secrecy::{ExposeSecret, SecretString};

const PREFIX: &str = "whsec_";

type HmacSha256 = hmac::Hmac<sha2_11::Sha256>;

/// A new signing secret, `whsec_…`.
pub fn new_secret() -> SecretString {
    let mut bytes = [0u8; 24];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    SecretString::from(format!("{PREFIX}{}", STANDARD.encode(bytes)))
}

/// The key bytes of a `whsec_…` secret; `None` when it is not one.
fn key(secret: &SecretString) -> Option<Vec<u8>> {
    let s = secret.expose_secret();
    STANDARD.decode(s.strip_prefix(PREFIX)?).ok()
}

/// `v1,<signature>` of one message under one secret.
pub fn sign(secret: &SecretString, id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = key(secret)?;
    let mut mac = HmacSha256::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The `webhook-signature` header value: one signature per secret, space-separated.
pub fn header(secrets: &[SecretString], id: &str, timestamp: i64, body: &str) -> String {
    secrets
        .iter()
        .filter_map(|s| sign(s, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_example_w7() {
        // the Standard Webhooks specification's published example
        let secret = SecretString::from("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let got = sign(
            &secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(
            got.as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }

    #[test]
    fn secrets_are_fresh_and_both_sign_during_rotation_w7() {
        let (a, b) = (new_secret(), new_secret());
        assert!(a.expose_secret().starts_with("whsec_"));
        assert_eq!(key(&a).unwrap().len(), 24);
        assert_ne!(a.expose_secret(), b.expose_secret());
        let h = header(&[a.clone(), b.clone()], "msg_1", 1, "{}");
        let parts: Vec<&str> = h.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(Some(parts[0].to_string()), sign(&a, "msg_1", 1, "{}"));
        assert_eq!(Some(parts[1].to_string()), sign(&b, "msg_1", 1, "{}"));
        assert_ne!(parts[0], parts[1]);
        // not a whsec_ secret: nothing signed rather than a wrong signature
        assert_eq!(sign(&SecretString::from("plain"), "m", 1, "{}"), None);
    }
}
