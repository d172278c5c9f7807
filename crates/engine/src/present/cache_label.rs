//! C4: the `_cache` label a result carries — the one place that writes it, for tool calls
//! (through [`crate::present_json`]'s [`Labels`](crate::Labels)) and
//! workflow steps alike. The cache itself belongs to the runtime; the engine only says
//! how a hit, or a walk too large to keep, reads to the model.

use serde_json::{json, Value};

/// How the dataset cache served or kept this call's walk.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheLabel {
    /// Served from a cached walk (RFC 3339 times).
    Hit {
        cached_at: String,
        expires_at: String,
    },
    /// A complete walk larger than a cache entry may be: the next call walks again.
    TooLarge { max_bytes: usize },
}

impl CacheLabel {
    pub fn hit(
        cached_at: chrono::DateTime<chrono::Utc>,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let fmt =
            |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        CacheLabel::Hit {
            cached_at: fmt(cached_at),
            expires_at: fmt(expires_at),
        }
    }

    /// The `_cache` value.
    pub fn value(&self) -> Value {
        match self {
            CacheLabel::Hit {
                cached_at,
                expires_at,
            } => json!({"hit": true, "cachedAt": cached_at, "expiresAt": expires_at}),
            CacheLabel::TooLarge { max_bytes } => json!({"hit": false, "stored": false,
                "reason": format!("the walk is larger than the cache entry limit ({max_bytes} bytes), so the next call walks again")}),
        }
    }

    /// What a hit adds to `_note`: fresher data is one `_refresh: true` away.
    pub fn note(&self) -> Option<String> {
        match self {
            CacheLabel::Hit { cached_at, .. } => Some(format!(
                "Served from a cached walk made at {cached_at}; if the user needs the very latest data, call again with `_refresh: true`."
            )),
            CacheLabel::TooLarge { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c4_label() {
        let t = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .map(|d| d.to_utc())
                .unwrap()
        };
        let hit = CacheLabel::hit(t("2026-01-01T00:00:00Z"), t("2026-01-02T00:00:00.5Z"));
        assert_eq!(
            hit.value(),
            json!({"hit": true, "cachedAt": "2026-01-01T00:00:00Z", "expiresAt": "2026-01-02T00:00:00Z"})
        );
        assert!(hit
            .note()
            .is_some_and(|n| n.contains("_refresh: true") && n.contains("2026-01-01T00:00:00Z")));
        let big = CacheLabel::TooLarge { max_bytes: 8 };
        assert_eq!(big.value()["stored"], json!(false));
        assert!(big.value()["reason"]
            .as_str()
            .is_some_and(|r| r.contains("(8 bytes)")));
        assert_eq!(big.note(), None);
    }
}
