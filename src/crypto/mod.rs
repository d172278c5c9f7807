//! Secrets handling: AEAD encryption of credentials at rest, API key secrets and
//! their hashes, unguessable ids. Nothing here logs or formats a secret.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Encrypts and decrypts small secrets with AES-256-GCM; output is nonce ‖ ciphertext ‖ tag.
#[derive(Clone)]
pub struct Cipher {
    aead: Aes256Gcm,
}

#[derive(Debug, thiserror::Error)]
#[error("credential could not be decrypted (wrong key or corrupted data)")]
pub struct DecryptError;

impl Cipher {
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            aead: Aes256Gcm::new(key.into()),
        }
    }

    /// `aad` binds the ciphertext to its owner (e.g. the provider id), so a ciphertext
    /// copied onto another row does not decrypt.
    pub fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let payload = aes_gcm::aead::Payload {
            msg: plaintext,
            aad,
        };
        let sealed = self
            .aead
            .encrypt(Nonce::from_slice(&nonce), payload)
            .unwrap_or_default();
        let mut out = Vec::with_capacity(12 + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    pub fn decrypt(&self, data: &[u8], aad: &[u8]) -> Result<Vec<u8>, DecryptError> {
        if data.len() < 12 + 16 {
            return Err(DecryptError);
        }
        let (nonce, sealed) = data.split_at(12);
        let payload = aes_gcm::aead::Payload { msg: sealed, aad };
        self.aead
            .decrypt(Nonce::from_slice(nonce), payload)
            .map_err(|_| DecryptError)
    }
}

/// Sealed bytes as stored (nonce ‖ ciphertext ‖ tag), carried to where they are opened:
/// its `Debug` shows only the length, so a struct holding one can derive `Debug` and be
/// logged. Every sealed secret a struct carries (an org credential, a connection's
/// tokens) is one of these: the one owner of that redaction.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed(pub Vec<u8>);

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealed({} bytes)", self.0.len())
    }
}

impl From<Vec<u8>> for Sealed {
    fn from(bytes: Vec<u8>) -> Self {
        Sealed(bytes)
    }
}

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// `len` random base62 characters (≈5.95 bits each) from the OS-seeded CSPRNG.
pub fn random_token(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| {
            // rejection sampling keeps the distribution uniform
            loop {
                let b = (rng.next_u32() & 0xff) as u8;
                if (b as usize) < ALPHABET.len() * 4 {
                    return ALPHABET[(b as usize) % ALPHABET.len()] as char;
                }
            }
        })
        .collect()
}

/// A new prefixed id such as `org_3kT9…` (128+ bits of randomness).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", random_token(22))
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// SHA-256 of a list of byte strings, each preceded by its length: two lists hash alike
/// only if they are the same list (no bytes can move from one item to the next).
pub fn sha256_list<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut h = Sha256::new();
    for item in items {
        h.update((item.len() as u64).to_le_bytes());
        h.update(item);
    }
    h.finalize().into()
}

/// Constant-time comparison of two byte strings (length is not secret).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_digest_tells_where_its_items_end() {
        let d = |items: &[&str]| sha256_list(items.iter().map(|i| i.as_bytes()));
        assert_eq!(d(&["ab", "c"]), d(&["ab", "c"]));
        assert_ne!(d(&["ab", "c"]), d(&["a", "bc"]));
        assert_ne!(d(&["abc"]), d(&["abc", ""]));
        assert_ne!(d(&[""]), d(&[]));
        assert_ne!(d(&["abc"]), sha256(b"abc"));
    }

    #[test]
    fn roundtrip_and_aad_binding() {
        let c = Cipher::new(&[7u8; 32]);
        let sealed = c.encrypt(b"sk_live_123", b"prv_a");
        assert!(!sealed.windows(11).any(|w| w == b"sk_live_123"));
        assert_eq!(c.decrypt(&sealed, b"prv_a").unwrap(), b"sk_live_123");
        assert!(c.decrypt(&sealed, b"prv_b").is_err());
        assert!(Cipher::new(&[8u8; 32]).decrypt(&sealed, b"prv_a").is_err());
    }

    #[test]
    fn ids_are_prefixed_and_distinct() {
        let a = new_id("org");
        assert!(a.starts_with("org_") && a.len() == 26);
        assert_ne!(a, new_id("org"));
    }
}
