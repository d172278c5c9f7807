#!/usr/bin/env bash
# Every behaviour id the code and the tests use must be defined in docs/behaviour.md.
# Prints the ids used and exits 0, or lists each undefined id with where it is used and
# exits 1. Needs bash and python3 only; run it from anywhere in the repository.
#
# Where it looks: every text file under src/, crates/, tests/ and benches/ (a
# node_modules folder is skipped: it is not ours; so is an npm package-lock.json, whose
# integrity hashes are base64 that can hold `X5` as a word; so is tests/fixtures/discovery,
# requests written the way people ask, where "the Q3 reports" is a quarter, not an id).
#
# What counts as a use of an id:
#   - an upper-case letter and one or two digits as a whole word, in a comment or in
#     code: `G3`, `P10`, "(C4)";
#   - a range of one family, en dash or hyphen: `C1–C6` uses C1, C2, … C6;
#   - a function named after an id, lower-cased: `fn p9_pages_come_in_order` uses P9.
#
# What looks like an id but is not one (each a precise pattern, no list of names):
#   - a Rust path segment: `IpAddr::V4`, `Version::V30`;
#   - a name the same file declares as an item: `const K1: f64` (a constant of the
#     search ranking), `static X1`, `struct`/`enum`/`type X1`, or an enum variant on a
#     line of its own (`    V30,`); every use of that name in that file is then the
#     name, not an id;
#   - a percent-encoded byte: the `A9` of `%C3%A9`;
#   - a name inside a JSON reference, `#/components/schemas/S0`, and a string literal
#     that is exactly the token, `"S30"`: names in test documents. Behaviour ids are
#     written in prose (a comment, a message), never as a whole string by themselves.
#
# What counts as a definition: a heading of docs/behaviour.md that starts with the id
# and an em dash, `### G3 — …` (the id is the heading's anchor text). An id defined
# twice is an error too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$root" <<'PY'
import os, re, signal, sys
from collections import defaultdict

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into `head`

root = sys.argv[1]
DOC = os.path.join(root, "docs", "behaviour.md")
DIRS = ["src", "crates", "tests", "benches"]

ID = re.compile(r"\b([A-Z])([0-9]{1,2})\b")
RANGE = re.compile(r"\b([A-Z])([0-9]{1,2})\s?[–-]\s?\1([0-9]{1,2})\b")
TEST_FN = re.compile(r"\bfn ([a-z])([0-9]{1,2})_")
DECLARED = re.compile(
    r"\b(?:const|static|struct|enum|type)\s+([A-Z][0-9]{1,2})\b"
    r"|^\s*([A-Z][0-9]{1,2})\s*(?:,|\(|\{|=)",
    re.M,
)
JSON_REF = re.compile(r"#/\S*/$")
DEFINED = re.compile(r"^#{2,4} ([A-Z][0-9]{1,2}) — ", re.M)


def text_files():
    for d in DIRS:
        top = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(
                n for n in dirnames
                if n != "node_modules" and os.path.join(dirpath, n) != os.path.join(root, "tests", "fixtures", "discovery")
            )
            for name in sorted(filenames):
                if name == "package-lock.json":
                    continue
                path = os.path.join(dirpath, name)
                try:
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                except (UnicodeDecodeError, OSError):
                    continue  # binary (fuzz inputs, images): no prose in it
                yield os.path.relpath(path, root), text


def uses(text):
    """(id, line number) of every use of an id in one file."""
    names = {a or b for a, b in DECLARED.findall(text)}
    for no, line in enumerate(text.splitlines(), 1):
        for m in RANGE.finditer(line):
            letter, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
            if lo < hi <= lo + 20:
                for n in range(lo, hi + 1):
                    yield f"{letter}{n}", no
        for m in ID.finditer(line):
            token, start, end = m.group(0), m.start(), m.end()
            before, after = line[:start], line[end:]
            if token in names:
                continue
            if before.endswith("::") or before.endswith("%"):
                continue
            if JSON_REF.search(before):
                continue
            if before.endswith('"') and after.startswith('"'):
                continue
            yield token, no
        for m in TEST_FN.finditer(line):
            yield f"{m.group(1).upper()}{m.group(2)}", no


used = defaultdict(list)
for rel, text in text_files():
    for token, no in uses(text):
        where = f"{rel}:{no}"
        if where not in used[token]:
            used[token].append(where)

with open(DOC, encoding="utf-8") as f:
    doc = f.read()
headings = DEFINED.findall(doc)
defined = set(headings)
twice = sorted({h for h in headings if headings.count(h) > 1})

def key(i):
    return (i[0], int(i[1:]))

missing = sorted(set(used) - defined, key=key)
for i in missing:
    where = used[i]
    more = f" (and {len(where) - 3} more)" if len(where) > 3 else ""
    print(f"undefined: {i} used at {', '.join(where[:3])}{more}")
for i in twice:
    print(f"defined twice in docs/behaviour.md: {i}")
if missing or twice:
    sys.exit(1)
print(f"{len(used)} behaviour ids used in {', '.join(DIRS)}; all defined in docs/behaviour.md:")
print(" ".join(sorted(used, key=key)))
PY
