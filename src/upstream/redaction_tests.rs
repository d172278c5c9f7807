//! The redactor against credentials written as JSON string content with any of their
//! characters `\u`-escaped ([`super::escaped`]), through [`super::error::Redactor`].

use proptest::prelude::*;

use super::error::Redactor;
use super::escaped;
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
    let found = escaped::find(hay, &["Axyz".into(), "41bc".into()]);
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
    let found = escaped::find(hay, &["S3cr/3t".into(), "\u{1F600}".into()]);
    assert_eq!(found, vec![2..25, 26..38]);
}
