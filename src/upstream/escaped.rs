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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::super::error::Redactor;
    use secrecy::SecretString;

    /// `secret` written as JSON string content with the characters `escaped` picks written
    /// as `\uXXXX` (upper or lower case hex, surrogate pairs past U+FFFF).
    fn encode(secret: &str, escaped: &[bool], upper: bool) -> String {
        let mut out = String::new();
        for (i, c) in secret.chars().enumerate() {
            if escaped.get(i).copied().unwrap_or(false) {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if upper {
                        out.push_str(&format!("\\u{u:04X}"));
                    } else {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            } else {
                let quoted = serde_json::to_string(&c.to_string()).unwrap();
                out.push_str(&quoted[1..quoted.len() - 1]);
            }
        }
        out
    }

    /// A credential and which of its characters [`encode`] escapes. The credential is any
    /// printable text, or one made of what escapes are made of (`\u`, hex digits, `u`,
    /// backslashes, quotes), so that its ends meet the insides of escapes; the escapes are
    /// drawn at random, or none, all, only the first or only the last character. Those
    /// edges are where the redactor's bugs were (5ea35f6: an escaped first digit, `\u0030a 0`
    /// holding `0a 0`), found 1 run in several at random and now in most.
    fn credential() -> impl Strategy<Value = (String, Vec<bool>)> {
        prop_oneof![
            "[ -~é€😀]{4,24}",
            "(\\\\u[0-9a-fA-F]{0,4}|[0-9a-fA-Fu\\\\\" ]|[ -~é😀]){4,10}",
        ]
        .prop_flat_map(|secret| {
            let n = secret.chars().count();
            let only = move |i: usize| (0..n).map(|j| j == i).collect::<Vec<_>>();
            let escaped = prop_oneof![
                3 => proptest::collection::vec(any::<bool>(), n),
                1 => Just(vec![false; n]),
                1 => Just(vec![true; n]),
                1 => Just(only(0)),
                1 => Just(only(n.saturating_sub(1))),
            ];
            (Just(secret), escaped)
        })
    }

    proptest! {
        /// Whatever characters of the credential an API escapes, and whatever surrounds
        /// it (escaped too), the JSON text it answers holds no copy of it once redacted —
        /// neither as text nor once parsed — and stays JSON.
        #[test]
        fn a_credential_with_any_characters_escaped_is_redacted(
            (secret, escaped) in credential(),
            upper in any::<bool>(),
            before in "[a-z \\\\u0-9é😀]{0,12}",
            before_escaped in proptest::collection::vec(any::<bool>(), 12),
            after in "[a-z \\\\u0-9é😀]{0,12}",
            after_escaped in proptest::collection::vec(any::<bool>(), 12),
        ) {
            let redactor = Redactor::new(Some(&SecretString::from(secret.clone())));
            let body = format!(
                "{{\"note\": \"{}{}{}\"}}",
                encode(&before, &before_escaped, upper),
                encode(&secret, &escaped, upper),
                encode(&after, &after_escaped, !upper),
            );
            let cleaned = String::from_utf8(redactor.clean_bytes(body.into_bytes())).unwrap();
            let parsed: serde_json::Value = serde_json::from_str(&cleaned).unwrap();
            let note = parsed["note"].as_str().unwrap();
            prop_assert!(!note.contains(&secret), "{cleaned}");
            prop_assert!(note.contains("[redacted]"), "{cleaned}");
            let excerpt = redactor.excerpt(cleaned.as_bytes());
            prop_assert!(!excerpt.contains(&secret));
        }
    }

    proptest! {
        /// Copies of a credential holding quotes, backslashes and escapable characters,
        /// among text holding them too (pieces of the credential, often): none survives,
        /// and the text stays JSON — unless a copy is there in its literal bytes, across a
        /// bare quote (see `Redactor`).
        #[test]
        fn copies_among_quotes_and_escapes_are_redacted_and_stay_json(
            secret in "[0-9A-F\\\\\"/unbxyz😀é\n ]{4,10}",
            pieces in proptest::collection::vec(
                (
                    "[0-9A-Fa-f\\\\\"/unbxyz😀é\n ]{0,6}",
                    proptest::option::of((0usize..10, 0usize..10)),
                    any::<bool>(),
                    any::<[bool; 10]>(),
                    any::<[bool; 10]>(),
                ),
                1..5,
            ),
            upper in any::<bool>(),
        ) {
            let redactor = Redactor::new(Some(&SecretString::from(secret.clone())));
            let mut content = String::new();
            for (text, piece, copy, text_escaped, copy_escaped) in &pieces {
                let text: String = match piece {
                    Some((skip, take)) => secret.chars().skip(*skip).take(*take).collect(),
                    None => text.clone(),
                };
                content.push_str(&encode(&text, text_escaped, upper));
                if *copy {
                    content.push_str(&encode(&secret, copy_escaped, !upper));
                }
            }
            let body = format!("{{\"note\":\"{content}\"}}");
            let cleaned = String::from_utf8(redactor.clean_bytes(body.clone().into_bytes())).unwrap();
            // no character of `[redacted]` is in the credential, so no copy is made by it
            prop_assert!(!cleaned.contains(&secret), "{body} -> {cleaned}");
            if !(body.contains(&secret) && secret.contains('"')) {
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(&cleaned);
                prop_assert!(parsed.is_ok(), "{body} -> {cleaned}");
                let note = parsed.unwrap()["note"].as_str().unwrap().to_string();
                prop_assert!(!note.contains(&secret), "{body} -> {cleaned}");
                if pieces.iter().any(|p| p.2) {
                    prop_assert!(note.contains("[redacted]"), "{body} -> {cleaned}");
                }
            }
        }
    }

    /// The JSON text `note` redacted for `secret`, and that text parsed.
    fn redact(secret: &str, note: &str) -> (String, String) {
        let redactor = Redactor::new(Some(&SecretString::from(secret.to_string())));
        let body = format!("{{\"note\":\"{note}\"}}");
        let cleaned = String::from_utf8(redactor.clean_bytes(body.into_bytes())).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&cleaned).unwrap();
        (cleaned, parsed["note"].as_str().unwrap().to_string())
    }

    #[test]
    fn a_literal_copy_starting_inside_an_escape_takes_the_whole_escape() {
        // `\u0030a 0` reads `0a 0`; its literal form also sits in it from the last hex digit
        let (cleaned, note) = redact("0a 0", r"x\u0030a 0y");
        assert_eq!(note, "x[redacted]y", "{cleaned}");
        // after an escaping backslash: `\nabc` is a newline then `abc`
        let (_, note) = redact("nabc", r"\nabc");
        assert_eq!(note, "[redacted]");
        // ending inside one, and across a surrogate pair's halves
        let (_, note) = redact("abc\\u00", r"abc\u0041");
        assert_eq!(note, "[redacted]");
        let (_, note) = redact("DE00xyz", r"\uD83D\uDE00xyz!");
        assert_eq!(note, "[redacted]!");
    }

    /// A credential holding a quote, found in its literal bytes where that quote is the one
    /// opening or closing the JSON string: the copy goes, the string's quote stays, and the
    /// text is still JSON.
    #[test]
    fn a_copy_found_from_a_strings_own_quote_leaves_the_quote() {
        // found by the property test: `"\\\u0032` holds `"\\\u` from the opening quote
        let (cleaned, note) = redact("\"\\\\\\u", r"\\\u0032x");
        assert_eq!(note, "[redacted]x", "{cleaned}");
        let (cleaned, note) = redact("abc\"", "zabc");
        assert_eq!(note, "z[redacted]", "{cleaned}");
    }

    proptest! {
        /// In any text, JSON or not, no copy survives: copies next to, inside or over one
        /// another (the text between them often a piece of the credential), of one made of
        /// quotes and escape parts (so it often overlaps itself, and its bare quotes are
        /// kept at a copy's ends by `widen`).
        #[test]
        fn no_copy_survives_in_any_text(
            secret in "[\"xy\\\\u0]{4,6}",
            around in proptest::collection::vec(
                ("[\"xy\\\\u0]{0,5}", proptest::option::of((0usize..6, 0usize..6))),
                1..4,
            ),
        ) {
            let redactor = Redactor::new(Some(&SecretString::from(secret.clone())));
            let around: Vec<String> = around
                .into_iter()
                .map(|(text, piece)| match piece {
                    Some((skip, take)) => secret.chars().skip(skip).take(take).collect(),
                    None => text,
                })
                .collect();
            let text = around.join(&secret);
            let cleaned = redactor.clean(&text);
            prop_assert!(!cleaned.contains(&secret), "{text} -> {cleaned}");
        }
    }

    /// Two copies sharing a quote (`"xy"xy"` holds `"xy"` twice): the quote one copy keeps
    /// at its end is where the other starts, so each goes on its own, and neither is left.
    #[test]
    fn copies_sharing_a_kept_quote_both_go() {
        let redactor = Redactor::new(Some(&SecretString::from("\"xy\"".to_string())));
        for text in [r#"say "xy"xy" now"#, r#"["xy"xy"xy"]"#] {
            let cleaned = redactor.clean(text);
            assert!(!cleaned.contains(r#""xy""#), "{text} -> {cleaned}");
            assert!(cleaned.contains("[redacted]"), "{text} -> {cleaned}");
        }
    }

    #[test]
    fn a_copy_never_takes_the_quote_that_opens_or_closes_the_string() {
        // inside a JSON string `"` is always escaped: a bare one opens or closes it
        let (cleaned, note) = redact(r#""""""#, r#"\"\"\u0022\""#);
        assert_eq!(note, "[redacted]", "{cleaned}");
        // `\u0061b` then the closing quote reads `ab"}` only across the string's end
        let (cleaned, note) = redact(r#"ab"}"#, r"\u0061b");
        assert_eq!(note, "ab", "{cleaned}");
    }

    #[test]
    fn a_copy_is_not_read_across_an_escape_boundary() {
        // an escaped backslash, then `u0041xyz` as text; `41` of the hex digits of `\u0041`
        let hay = br#"\\u0041xyz \u0041\u0062c"#;
        let found = super::find(hay, &["Axyz".into(), "41bc".into()]);
        assert!(found.is_empty(), "{found:?}");
    }

    proptest! {
        /// An encoder may write any `/` as `\/` or not (PHP escapes all, others none, a
        /// templated body may mix): a credential holding slashes is gone whichever of them
        /// are escaped, with no `\u` anywhere, and the body stays JSON.
        #[test]
        fn a_credential_with_some_slashes_escaped_is_redacted(
            secret in "[a-z0-9]{2,6}(/[a-z0-9/]{1,6}){1,3}",
            escaped in proptest::collection::vec(any::<bool>(), 32),
            before in "[a-z /]{0,8}",
            after in "[a-z /]{0,8}",
        ) {
            let redactor = Redactor::new(Some(&SecretString::from(secret.clone())));
            let mut slashes = escaped.iter();
            let written: String = secret
                .chars()
                .map(|c| match (c, slashes.next()) {
                    ('/', Some(true)) => "\\/".to_string(),
                    (c, _) => c.to_string(),
                })
                .collect();
            let body = format!("{{\"note\":\"{before}{written}{after}\"}}");
            let cleaned = String::from_utf8(redactor.clean_bytes(body.into_bytes())).unwrap();
            let parsed: serde_json::Value = serde_json::from_str(&cleaned).unwrap();
            let note = parsed["note"].as_str().unwrap();
            prop_assert!(!note.contains(&secret), "{cleaned}");
            prop_assert!(note.contains("[redacted]"), "{cleaned}");
        }
    }

    #[test]
    fn every_escape_form_is_read() {
        let hay = br#"x \u0053\u0033cr\/3\u0074 \ud83d\ude00 y"#;
        let found = super::find(hay, &["S3cr/3t".into(), "\u{1F600}".into()]);
        assert_eq!(found, vec![2..25, 26..38]);
    }
}
