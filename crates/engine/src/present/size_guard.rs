//! G1: the size guard's arithmetic. A result's size in tokens is counted with a fixed,
//! conservative rule — one token per [`BYTES_PER_TOKEN`] bytes of compact JSON, rounded
//! up. Real tokenizers average about 3.5–4 characters per token on JSON, and a UTF-8
//! string never has fewer bytes than characters, so the rule overcounts: a result that
//! passes it fits the conversation budget.

use serde_json::Value;

pub const BYTES_PER_TOKEN: usize = 3;

/// Bytes kept free below the budget: labels are written (and measured) by the guard itself
/// now, so this is margin for what wraps a result on its way out (the response's `id`, `name`).
pub const RUNTIME_HEADROOM: usize = 400;

/// Tokens a JSON text of `bytes` bytes is counted as.
pub fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The smallest budget honoured: below it the guard's own notes would not fit, so a
/// smaller configured budget is raised to this.
pub const MIN_TOKEN_BUDGET: usize = 1_000;

/// The byte budget the guard cuts to for a token budget.
pub fn byte_budget(token_budget: usize) -> usize {
    (token_budget.max(MIN_TOKEN_BUDGET) * BYTES_PER_TOKEN).saturating_sub(RUNTIME_HEADROOM)
}

/// Compact JSON length of a value, without building the string.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail; a failure would only undercount to zero.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Bytes a char takes inside a JSON string literal.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest prefix of `chars` (starting at char `from`) whose JSON-escaped form fits
/// `avail` bytes, as (prefix, chars taken). Never splits a character.
pub fn text_prefix(text: &str, from: usize, max_chars: usize, avail: usize) -> (String, usize) {
    let mut used = 0;
    let mut out = String::new();
    let mut taken = 0;
    for c in text.chars().skip(from).take(max_chars) {
        let l = escaped_len(c);
        if used + l > avail {
            break;
        }
        used += l;
        taken += 1;
        out.push(c);
    }
    (out, taken)
}

/// How many leading rows of the given compact lengths fit in `avail` bytes as the
/// elements of a JSON array (the brackets are already counted by the caller's frame).
pub fn rows_that_fit(lens: impl IntoIterator<Item = usize>, avail: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for len in lens {
        let cost = len + usize::from(n > 0);
        if used + cost > avail {
            break;
        }
        used += cost;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn g1_rule_is_conservative() {
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(1), 1);
        assert_eq!(tokens(3), 1);
        assert_eq!(tokens(4), 2);
        assert_eq!(byte_budget(25_000), 75_000 - RUNTIME_HEADROOM);
        assert_eq!(byte_budget(10), byte_budget(MIN_TOKEN_BUDGET));
        let v = json!({"a": "é\"x", "b": [1, 2]});
        assert_eq!(
            json_len(&v),
            serde_json::to_string(&v).map(|s| s.len()).unwrap_or(0)
        );
    }

    #[test]
    fn text_prefix_counts_escapes_and_keeps_chars_whole() {
        let (p, n) = text_prefix("ab\"c", 0, 100, 4);
        assert_eq!((p.as_str(), n), ("ab\"", 3));
        let (p, n) = text_prefix("ééé", 1, 100, 3);
        assert_eq!((p.as_str(), n), ("é", 1));
        assert_eq!(rows_that_fit([3, 3, 3], 7), 2);
        assert_eq!(rows_that_fit([8], 7), 0);
    }
}
