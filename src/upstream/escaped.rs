//! A secret written as JSON string content with any of its characters escaped: `\uXXXX`
//! (either case of hex digits, a surrogate pair for characters past U+FFFF) or a short
//! escape (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`). A JSON encoder may escape any
//! character this way, so an API can echo a credential in a form no fixed list of
//! encodings foresees; [`super::error::Redactor`] finds those copies here.
//!
//! Which copies: every one within one JSON string holding an optional escape — a `\u`, or
//! a `\/` (the one short escape an encoder may use or not: `"`, `\` and control characters
//! must be escaped, so `Redactor`'s literal JSON forms already hold those); the literal
//! forms `Redactor` looks for cover the copies with none. A bare `"` ends a string, so no
//! copy takes one.
//! Cost: nothing unless the text holds a `\u` or `\/`; then only start positions within
//! reach of one are tried, each at most once, and only those starting with an escape or
//! the secret's first byte.

use std::ops::Range;

/// The byte ranges of `hay` that hold one of `secrets` with at least one escaped
/// character near a `\u` or `\/`, in order and not overlapping.
pub(super) fn find(hay: &[u8], secrets: &[String]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let Some(longest) = secrets.iter().map(|s| s.chars().count()).max() else {
        return found;
    };
    // the most bytes one character can take escaped: a surrogate pair, `\uD83D\uDE00`
    let reach = longest * 12;
    // a copy starts with its first character's first byte, or with an escape
    let firsts: Vec<u8> = secrets.iter().filter_map(|s| s.bytes().next()).collect();
    let mut cursor = 0;
    // where an optional escape is: a copy holding one is near it
    let optional =
        memchr::memchr_iter(b'\\', hay).filter(|&p| matches!(hay.get(p + 1), Some(b'u' | b'/')));
    for at in optional {
        if at < cursor {
            continue;
        }
        let mut i = cursor.max(at.saturating_sub(reach));
        while i <= at {
            if hay[i] != b'\\' && !firsts.contains(&hay[i]) {
                i += 1;
                continue;
            }
            let found_at = secrets.iter().find_map(|s| matches_at(hay, i, s));
            match found_at.filter(|_| !inside_escape(hay, i)) {
                Some(end) => {
                    found.push(i..end);
                    i = end;
                }
                None => i += 1,
            }
        }
        cursor = cursor.max(i);
    }
    found
}

/// Where `secret` ends when it starts at `start` of `hay`, each character as itself or
/// escaped. A backslash or `"` is never itself in JSON string content: a bare `"` opens or
/// closes the string, and a copy taking it would cut the text's structure.
fn matches_at(hay: &[u8], start: usize, secret: &str) -> Option<usize> {
    let mut at = start;
    for c in secret.chars() {
        let mut utf8 = [0u8; 4];
        let literal = c.encode_utf8(&mut utf8).as_bytes();
        if hay.get(at..at + literal.len()) == Some(literal) && c != '\\' && c != '"' {
            at += literal.len();
            continue;
        }
        let (decoded, used) = escape(hay.get(at..)?)?;
        if decoded != c {
            return None;
        }
        at += used;
    }
    Some(at)
}

/// Whether `at` is inside an escape rather than where a character starts: after an odd
/// run of backslashes (`\\u0041` is a backslash, then `u0041`), or within the hex digits
/// of a `\uXXXX`. A copy found there is not one, and cutting there would break the text.
fn inside_escape(hay: &[u8], at: usize) -> bool {
    escape_around(hay, at).is_some_and(|p| p < at)
}

/// Whether a backslash at `p` would start an escape (an even run of backslashes before).
fn escape_starts(hay: &[u8], p: usize) -> bool {
    let run = hay[..p].iter().rev().take_while(|b| **b == b'\\').count();
    run % 2 == 0
}

/// Where the escape holding `at` starts, if `at` is within one (or starts one): the
/// escaping backslash right before it, or the `\` of a `\uXXXX` whose hex digits hold it.
fn escape_around(hay: &[u8], at: usize) -> Option<usize> {
    if at > 0 && !escape_starts(hay, at) {
        return Some(at - 1);
    }
    (at.saturating_sub(5)..=at.min(hay.len()))
        .find(|&p| hay[p..].starts_with(b"\\u") && escape_starts(hay, p) && p + 6 > at)
}

/// `range` of `hay` widened to whole characters of JSON string content: a copy found in
/// its literal form may start or end inside an escape (`\u0030a 0` holds `0a 0` from
/// the `0` of its hex digits), and cutting there would leave the text unreadable. So it
/// starts at that escape's backslash and ends after that escape, a surrogate pair's two
/// halves counting as one. Nor does it take a string's own quote at either end
/// ([`without_quotes`]).
pub(super) fn widen(hay: &[u8], range: Range<usize>) -> Range<usize> {
    let start = char_start(hay, range.start);
    let last = char_start(hay, range.end);
    let end = match escape(&hay[last..]) {
        Some((_, len)) if last < range.end => range.end.max(last + len),
        _ => range.end,
    };
    without_quotes(hay, start..end)
}

/// `range` without an unescaped `"` at either end: a credential holding a quote is found
/// in its literal form where the quote is the one opening or closing a JSON string (the
/// text `"\\\u0032` holds `"\\\u` from the string's opening quote), and cutting that
/// quote away would leave the text unreadable. Such a quote is the text's, not a copy's
/// (inside a string a quote is always escaped), and the rest of the copy still goes, so
/// what stays of the credential is a quote at either end.
fn without_quotes(hay: &[u8], range: Range<usize>) -> Range<usize> {
    let quote = |p: usize| hay[p] == b'"' && escape_starts(hay, p);
    let mut r = range;
    if r.len() > 1 && quote(r.start) {
        r.start += 1;
    }
    if r.len() > 1 && quote(r.end - 1) {
        r.end -= 1;
    }
    r
}

/// Where the character holding `at` starts: `at`, the start of the escape around it, or
/// the high half of a surrogate pair whose low half is there.
fn char_start(hay: &[u8], at: usize) -> usize {
    let start = escape_around(hay, at).unwrap_or(at);
    let unit = |p: usize| {
        hay.get(p..p + 6)
            .filter(|u| u.starts_with(b"\\u") && escape_starts(hay, p))
            .and_then(|u| hex4(&u[2..]))
    };
    let low = unit(start).is_some_and(|u| (0xDC00..0xE000).contains(&u));
    let high = start >= 6 && unit(start - 6).is_some_and(|u| (0xD800..0xDC00).contains(&u));
    if low && high {
        start - 6
    } else {
        start
    }
}

/// The character a JSON escape at the start of `s` stands for, and its length.
fn escape(s: &[u8]) -> Option<(char, usize)> {
    if s.first() != Some(&b'\\') {
        return None;
    }
    let short = match s.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(s.get(2..6)?)?;
            if !(0xD800..0xDC00).contains(&unit) {
                return Some((char::from_u32(unit)?, 6));
            }
            if s.get(6..8)? != b"\\u" {
                return None;
            }
            let low = hex4(s.get(8..12)?)?;
            if !(0xDC00..0xE000).contains(&low) {
                return None;
            }
            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            return Some((char::from_u32(c)?, 12));
        }
        _ => return None,
    };
    Some((short, 2))
}

fn hex4(digits: &[u8]) -> Option<u32> {
    std::str::from_utf8(digits)
        .ok()
        .and_then(|d| u32::from_str_radix(d, 16).ok())
        .filter(|_| digits.iter().all(u8::is_ascii_hexdigit))
}
