//! Reading rows without building trees: a scanner over JSON text that is already known to
//! be valid (an [`Item`](crate::document::item::Item)'s text). It only finds where keys and
//! values start and end, so filtering and projecting a row costs a pass over the bytes
//! that matter and no allocation. Never given unvalidated text: it does not check syntax.

use serde_json::Value;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string literal opening at `i`.
fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    // Most strings in rows are short: a plain loop beats setting up a vector search.
    let short = (j + 24).min(b.len());
    while j < short {
        match b[j] {
            b'"' => return j + 1,
            b'\\' => break,
            _ => j += 1,
        }
    }
    while let Some(off) = b
        .get(j..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        j += off;
        if b[j] == b'"' {
            return j + 1;
        }
        j += 2;
    }
    b.len()
}

/// End (exclusive) of the value starting at `i` (not whitespace).
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        Some(_) => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !is_ws(b[j]) {
                j += 1;
            }
            j
        }
        None => i,
    }
}

/// `(key as written, without quotes; raw value)` pairs of an object's text.
pub fn entries(s: &str) -> Entries<'_> {
    let b = s.as_bytes();
    let start = skip_ws(b, 0);
    Entries {
        s,
        i: start + 1,
        done: b.get(start) != Some(&b'{'),
    }
}

pub struct Entries<'a> {
    s: &'a str,
    i: usize,
    done: bool,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let b = self.s.as_bytes();
        let mut i = skip_ws(b, self.i);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
        if b.get(i) != Some(&b'"') {
            self.done = true;
            return None;
        }
        let key_end = string_end(b, i);
        let key = self.s.get(i + 1..key_end.saturating_sub(1))?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            self.done = true;
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i);
        if end <= i {
            // Only reachable on text that is not JSON: stop rather than spin.
            self.done = true;
            return None;
        }
        let value = self.s.get(i..end)?;
        self.i = end;
        Some((key, value))
    }
}

/// Raw elements of an array's text.
pub fn elements(s: &str) -> Elements<'_> {
    let b = s.as_bytes();
    let start = skip_ws(b, 0);
    Elements {
        s,
        i: start + 1,
        done: b.get(start) != Some(&b'['),
    }
}

pub struct Elements<'a> {
    s: &'a str,
    i: usize,
    done: bool,
}

impl<'a> Iterator for Elements<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let b = self.s.as_bytes();
        let mut i = skip_ws(b, self.i);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
        if matches!(b.get(i), None | Some(b']')) {
            self.done = true;
            return None;
        }
        let end = value_end(b, i);
        if end <= i {
            self.done = true;
            return None;
        }
        self.i = end;
        self.s.get(i..end)
    }
}

/// The raw value of `key` in an object's text, if present.
pub fn get<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    entries(s).find(|(k, _)| key_is(k, key)).map(|(_, v)| v)
}

/// Whether a key as written in JSON (escapes included) names `wanted`.
pub fn key_is(written: &str, wanted: &str) -> bool {
    if !written.contains('\\') {
        return written == wanted;
    }
    serde_json::from_str::<String>(&format!("\"{written}\"")).is_ok_and(|k| k == wanted)
}

/// The key as a string (escapes resolved).
pub fn key_string(written: &str) -> String {
    if !written.contains('\\') {
        return written.to_owned();
    }
    serde_json::from_str(&format!("\"{written}\"")).unwrap_or_else(|_| written.to_owned())
}

pub fn is_object(s: &str) -> bool {
    s.trim_start().starts_with('{')
}

pub fn is_array(s: &str) -> bool {
    s.trim_start().starts_with('[')
}

/// Every raw value a dot-path reaches, mapping over arrays between segments (F1, R1).
pub fn resolve<'a>(s: &'a str, segs: &[String], out: &mut Vec<&'a str>) {
    resolve_at(s, segs, out, 0);
}

/// How deep lists nested in lists are followed: far beyond real payloads, and it keeps
/// the stack bounded whatever the upstream sends.
pub const MAX_DEPTH: usize = 128;

fn resolve_at<'a>(s: &'a str, segs: &[String], out: &mut Vec<&'a str>, depth: usize) {
    let Some((first, rest)) = segs.split_first() else {
        out.push(s);
        return;
    };
    if depth >= MAX_DEPTH {
        return;
    }
    if is_object(s) {
        if let Some((_, v)) = entries(s).find(|(k, _)| key_is(k, first)) {
            resolve_at(v, rest, out, depth + 1);
        }
    } else if is_array(s) {
        for e in elements(s) {
            resolve_at(e, segs, out, depth + 1);
        }
    }
}

/// The value of one raw leaf (scalars are cheap; containers are parsed).
pub fn leaf(s: &str) -> Value {
    value_of(s)
}

/// Parses one JSON text known to be valid (or returns null). Scalars take a fast path:
/// they are most of what filters and projections read.
pub(crate) fn value_of(raw: &str) -> Value {
    match raw.as_bytes().first() {
        Some(b'"') if raw.len() >= 2 && !raw.contains('\\') => {
            return Value::String(raw[1..raw.len() - 1].to_owned());
        }
        Some(b'n') if raw == "null" => return Value::Null,
        Some(b't') if raw == "true" => return Value::Bool(true),
        Some(b'f') if raw == "false" => return Value::Bool(false),
        Some(b'-' | b'0'..=b'9') => {
            if let Ok(i) = raw.parse::<i64>() {
                return Value::from(i);
            }
        }
        _ => {}
    }
    // serde_json's recursion limit turns hostile nesting into an error, never a stack
    // overflow.
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_objects_and_arrays_with_awkward_strings() {
        let s = r#" { "a" : "x,}\"]" , "b\"q":[1, {"c":"]"}] ,"d":-1.5e3,"e":{} } "#;
        let got: Vec<(&str, &str)> = entries(s).collect();
        assert_eq!(
            got,
            [
                ("a", r#""x,}\"]""#),
                (r#"b\"q"#, r#"[1, {"c":"]"}]"#),
                ("d", "-1.5e3"),
                ("e", "{}")
            ]
        );
        assert!(key_is(r#"b\"q"#, "b\"q"));
        let els: Vec<&str> = elements(r#"[ 1 ,"a", [2,3] ,{"x":[]}, null ]"#).collect();
        assert_eq!(els, ["1", "\"a\"", "[2,3]", "{\"x\":[]}", "null"]);
        assert_eq!(elements("[]").count(), 0);
        assert_eq!(entries("{}").count(), 0);
        assert_eq!(entries("[1]").count(), 0);
    }

    proptest::proptest! {
        /// Given text that is not valid JSON (a caller bug), the scanner still never
        /// panics nor loops forever: it only reads.
        #[test]
        fn garbage_never_panics(s in "[\\[\\]{}\",:a\\\\ 0-9é]{0,40}") {
            let _ = entries(&s).take(100).count();
            let _ = elements(&s).take(100).count();
            let mut out = Vec::new();
            resolve(&s, &["a".into(), "b".into()], &mut out);
        }
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let mut out = Vec::new();
        resolve(&deep, &["a".into(), "b".into()], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn resolves_paths_through_arrays() {
        let s = r#"{"lines":[{"sku":"a"},{"sku":"b"},{"x":1}],"c":{"n":null}}"#;
        let mut out = Vec::new();
        resolve(s, &["lines".into(), "sku".into()], &mut out);
        assert_eq!(out, ["\"a\"", "\"b\""]);
        out.clear();
        resolve(s, &["c".into(), "n".into()], &mut out);
        assert_eq!(out, ["null"]);
    }
}
