#!/usr/bin/env python3
"""The layering rule, checked: a module of the server crate imports only modules of
lower layers (the table below, lowest first), the modules of one folder import each
other without circles, and the engine crate depends on no I/O crate.

A reference is any `crate::<module>` path in code (comments and strings are removed
first; a doc link is a comment). `super::` paths count as references to a sibling.
Run from anywhere: `scripts/check-layers`. Exit 1 lists every violation.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# The server's layers, lowest first. A module may use any module of a lower row;
# modules on one row may not use each other.
LAYERS = [
    ["testing"],
    ["telemetry"],
    ["crypto"],
    ["store"],
    ["kv"],
    ["quota"],
    ["upstream"],
    ["auth"],
    ["config"],
    ["results"],
    ["walk"],
    ["discovery"],
    ["call"],
    ["workflow", "mcp", "openapi_import", "studio"],
    ["api"],
    ["app"],
    ["fuzzing"],
]
# Crates the pure engine must never depend on, directly or through another crate.
ENGINE_FORBIDDEN = {
    "tokio", "actix-web", "actix-rt", "actix-http", "sqlx", "sqlx-core", "redis",
    "deadpool-redis", "reqwest", "hyper", "rmcp", "mio", "socket2",
}

RANK = {m: i for i, row in enumerate(LAYERS) for m in row}


def strip(text):
    """Code with comments, strings and char literals blanked (line structure kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            seg = text[i: n if j < 0 else j + 2]
            out.append("\n" * seg.count("\n"))
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            seg = text[i: n if end < 0 else end + 1 + len(m.group(1))]
            out.append("\n" * seg.count("\n"))
            i = n if end < 0 else end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text[i:j].count("\n"))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:i + 4]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def paths_in(code):
    """Every `crate::a::b…` path, with `crate::{a, b::c}` groups expanded one level."""
    found = []
    for m in re.finditer(r"\bcrate::([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?", code):
        found.append((m.group(1), m.group(2)))
    for m in re.finditer(r"\bcrate::\{([^}]*)\}", code):
        for part in re.finditer(r"(?:^|[{,])\s*([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?", m.group(1)):
            found.append((part.group(1), part.group(2)))
    return found


def modules():
    """(top-level module, path of its file below it, code) for every server source file."""
    for dirpath, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, SRC).split(os.sep)
            with open(path, encoding="utf-8") as fh:
                yield rel, strip(fh.read())


def cycles(graph):
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    problems = []
    loose = [f for f in os.listdir(SRC) if f.endswith(".rs") and f not in ("lib.rs", "main.rs")]
    for f in sorted(loose):
        problems.append(f"src/{f}: only lib.rs and main.rs stay loose in src/; put it in its layer's folder")
    # folder -> {child: set(children it uses)}
    siblings = {}
    for rel, code in modules():
        top = rel[0][:-3] if rel[0].endswith(".rs") else rel[0]
        if top in ("lib", "main"):
            continue
        if top not in RANK and top != "bin":
            problems.append(f"src/{'/'.join(rel)}: module `{top}` has no layer in scripts/check_layers.py")
            continue
        for first, second in paths_in(code):
            if top == "bin":
                continue
            if first in RANK and first != top and RANK[first] >= RANK[top]:
                problems.append(
                    f"src/{'/'.join(rel)}: `{top}` (layer {RANK[top]}) uses `crate::{first}` (layer {RANK[first]})"
                )
        # sibling references inside one folder: crate::top::x and super::x from a child file
        if len(rel) >= 2:
            folder = "/".join(rel[:-1])
            me = rel[-1][:-3]
            if me == "mod":
                continue
            uses = siblings.setdefault(folder, {}).setdefault(me, set())
            prefix = "crate::" + "::".join(rel[:-1]) + "::"
            for m in re.finditer(re.escape(prefix) + r"([a-z_][a-z0-9_]*)", code):
                uses.add(m.group(1))
            for m in re.finditer(r"(?<![\w:])super::([a-z_][a-z0-9_]*)", code):
                uses.add(m.group(1))
            for m in re.finditer(r"(?<![\w:])super::\{([^}]*)\}", code):
                for part in re.finditer(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", m.group(1)):
                    uses.add(part.group(1))
    for folder, graph in sorted(siblings.items()):
        known = set(graph)
        g = {k: {v for v in vs if v in known and v != k} for k, vs in graph.items()}
        for comp in cycles(g):
            problems.append(f"src/{folder}: modules {', '.join(comp)} use each other (a circle)")
    # the engine crate's dependencies, through `cargo tree`
    tree = subprocess.run(
        ["cargo", "tree", "-p", "loopgate-engine", "-e", "normal,build,dev", "--prefix", "none", "--offline"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if tree.returncode != 0:
        tree = subprocess.run(
            ["cargo", "tree", "-p", "loopgate-engine", "-e", "normal,build,dev", "--prefix", "none"],
            cwd=ROOT, capture_output=True, text=True,
        )
    if tree.returncode != 0:
        problems.append("cargo tree -p loopgate-engine failed: " + tree.stderr.strip()[:500])
    else:
        names = {line.split()[0] for line in tree.stdout.splitlines() if line.strip()}
        for bad in sorted(names & ENGINE_FORBIDDEN):
            problems.append(f"crates/engine: depends on `{bad}` (the engine does no I/O)")
    if problems:
        print("layering check failed:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"layers ok: {len(RANK)} server modules in {len(LAYERS)} layers, no circles, engine free of I/O crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
