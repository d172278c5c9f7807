#!/usr/bin/env python3
"""Every bound a description states of a number is the schema's: a `description` of an
integer or number schema (property or parameter) that says "1 to 32", "60–86400",
"[1, 32]" or "at most 100" must have that `minimum` and `maximum`. Usage: bounds.py
openapi/openapi.json (scripts/contract, step `validate`)."""

import json
import re
import sys

RANGE = re.compile(r"(-?\d[\d,_]*)\s*(?:to|–|-|\.\.)\s*(-?\d[\d,_]*)|\[(\d+),\s*(\d+)\]|at most (\d[\d,_]*)")


def num(x):
    return int(x.replace(",", "").replace("_", ""))


def check(where, s, out):
    if not isinstance(s, dict):
        return
    types = s.get("type") if isinstance(s.get("type"), list) else [s.get("type")]
    desc = s.get("description") or ""
    # a list-or-number schema's "at most" may bound the list: only plain numbers here
    if ("integer" in types or "number" in types) and "array" not in types and desc:
        m = RANGE.search(desc)
        if m:
            if m.group(5):
                lo, hi = None, num(m.group(5))
            elif m.group(1):
                lo, hi = num(m.group(1)), num(m.group(2))
            else:
                lo, hi = num(m.group(3)), num(m.group(4))
            if (lo is not None and s.get("minimum") != lo) or s.get("maximum") != hi:
                out.append(f"{where}: the description says {lo}..{hi}, the schema "
                           f"minimum {s.get('minimum')} maximum {s.get('maximum')}")
    for k, v in (s.get("properties") or {}).items():
        check(f"{where}.{k}", v, out)
    for k in ("items", "additionalProperties"):
        check(f"{where}[{k}]", s.get(k), out)
    for k in ("oneOf", "anyOf", "allOf"):
        for i, v in enumerate(s.get(k) or []):
            check(f"{where}.{k}[{i}]", v, out)


def main():
    doc = json.load(open(sys.argv[1]))
    out = []
    for name, s in doc["components"]["schemas"].items():
        check(name, s, out)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict):
                continue
            for p in op.get("parameters", []):
                s = dict(p.get("schema", {}))
                s.setdefault("description", p.get("description"))
                check(f"{op.get('operationId')}({p['name']})", s, out)
            for ct, media in (op.get("requestBody") or {}).get("content", {}).items():
                check(f"{op.get('operationId')} body", media.get("schema"), out)
    if out:
        print("bounds stated in descriptions differ from the schema's:\n  " + "\n  ".join(out), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
