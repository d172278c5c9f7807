//! Reading a response: the body under a byte cap enforced while it streams in (a
//! declared `Content-Length` over the cap fails before any byte is read), short error
//! bodies for excerpts, and `Retry-After` (delay seconds or an HTTP date).

use std::time::Duration;

use chrono::{DateTime, Utc};

/// How much of an error response is read for its excerpt.
pub(crate) const ERROR_BODY_BYTES: usize = 64 * 1024;

pub(crate) enum ReadError {
    TooLarge,
    Transport(reqwest::Error),
}

/// Reads the whole body, failing as soon as it passes `cap` bytes; `watch` sees each
/// chunk as it arrives.
pub(crate) async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
    watch: Option<super::BodyWatch<'_>>,
) -> Result<Vec<u8>, ReadError> {
    let declared = response.content_length();
    if declared.is_some_and(|len| len > cap as u64) {
        return Err(ReadError::TooLarge);
    }
    let hint = declared.map_or(0, |len| len as usize).min(cap).min(1 << 20);
    let mut body = Vec::with_capacity(hint);
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Transport)? {
        if body.len() + chunk.len() > cap {
            return Err(ReadError::TooLarge);
        }
        if let Some(w) = watch {
            (w.0)(&chunk);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads at most `cap` bytes of the body and drops the rest; a transfer error ends
/// it early. For error responses, whose body only feeds an excerpt.
pub(crate) async fn read_prefix(response: &mut reqwest::Response, cap: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = cap - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= cap {
            break;
        }
    }
    body
}

/// `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (a date in the
/// past is zero).
pub(crate) fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}
