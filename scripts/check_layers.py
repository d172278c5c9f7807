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
ENGINE_SRC = os.path.join(ROOT, "crates", "engine", "src")

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
    ["discovery", "embedding"],
    # pure: a document in, tool definitions out (their search documents are discovery's)
    ["openapi_import"],
    ["call"],
    ["workflow", "mcp", "studio"],
    ["automate"],
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

# Circles known and not yet untangled, each named exactly: a new member or a new circle
# still fails. None: the engine's shared data (resume points, `_for_each` errors) lives in
# `resume`, below the stages that use it (see docs/architecture.md).
KNOWN_CIRCLES = set()


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
        elif c in "br" and re.match(r'b?r#*"', text[i:i + 12]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
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


def group_items(code, start):
    """The top-level items of the `{…}` group opening at `start`, and where it ends."""
    depth, cur, items, i = 0, "", [], start
    while i < len(code):
        ch = code[i]
        if ch == "{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif ch == "}":
            depth -= 1
            if depth == 0:
                items.append(cur)
                return [x.strip() for x in items if x.strip()], i
        if ch == "," and depth == 1:
            items.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return [x.strip() for x in items if x.strip()], i


def inline_depth(code):
    """For each offset of `code`, how many inline `mod x { … }` blocks enclose it."""
    opens = {m.end() - 1 for m in re.finditer(r"\bmod\s+[a-z_][a-z0-9_]*\s*\{", code)}
    depth, stack, out = 0, [], [0] * (len(code) + 1)
    for i, ch in enumerate(code):
        if ch == "{":
            stack.append(i in opens)
            depth += i in opens
        elif ch == "}" and stack:
            depth -= stack.pop()
        out[i] = depth
    return out


def paths_in(code, module):
    """Every absolute path `code` names, as a list of segments from the crate root:
    `crate::a::b`, `crate::{a, b::{c}}` groups (nested too), and `super::` chains resolved
    against `module` (the file's module path) and the inline modules around them."""
    found = []
    depth = inline_depth(code)
    for m in re.finditer(r"\b(crate|(?:super::)*super)::", code):
        if m.start() > 0 and (code[m.start() - 1].isalnum() or code[m.start() - 1] in "_:"):
            continue
        head = m.group(1)
        if head == "crate":
            base = []
        else:
            ups = head.count("super")
            here = module + ["<inline>"] * depth[m.start()]
            if ups > len(here):
                continue
            base = here[: len(here) - ups]
            if any(s == "<inline>" for s in base):
                continue  # within the file's own inline modules
        rest = code[m.end():]
        if rest.startswith("{"):
            items, _ = group_items(code, m.end())
            for it in items:
                segs = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", it.split("{")[0].split(" as ")[0])
                if segs and segs[0] != "self":
                    found.append(base + segs[:2])
                # one more level of nesting: `a::{b, c}`
                if "{" in it:
                    pre = [s for s in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", it.split("{")[0])]
                    inner, _ = group_items(it, it.index("{"))
                    for x in inner:
                        segs = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", x.split("{")[0])
                        if segs and segs[0] != "self":
                            found.append(base + pre + segs[:1])
        else:
            segs = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?:::([A-Za-z_][A-Za-z0-9_]*))?", rest)
            if segs:
                found.append(base + [s for s in segs.groups() if s])
    return found


def modules(src):
    """(module path, file path, code) for every source file under `src`."""
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src).split(os.sep)
            module = rel[:-1] + ([] if rel[-1] in ("mod.rs", "lib.rs", "main.rs") else [rel[-1][:-3]])
            with open(path, encoding="utf-8") as fh:
                yield module, os.path.relpath(path, ROOT), strip(fh.read())


def sibling_circles(src, problems):
    """Modules of one folder (children of one parent) that use each other, in a circle."""
    graph = {}
    for module, path, code in modules(src):
        if not module:
            continue
        for target in paths_in(code, module):
            # the sibling of `module` at the level where the path leaves `module`'s line
            for level in range(1, len(module) + 1):
                parent = module[: level - 1]
                if target[: level - 1] != parent or len(target) < level:
                    break
                mine, theirs = module[level - 1], target[level - 1]
                if mine != theirs:
                    graph.setdefault(tuple(parent), {}).setdefault(mine, set()).add(theirs)
                    break
    for parent, g in sorted(graph.items()):
        known = set(g)
        g = {k: {v for v in vs if v in known and v != k} for k, vs in g.items()}
        for comp in cycles(g):
            where = os.path.relpath(os.path.join(src, *parent), ROOT)
            if (where, tuple(comp)) in KNOWN_CIRCLES:
                continue
            problems.append(f"{where}: modules {', '.join(comp)} use each other (a circle)")


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
    for module, path, code in modules(SRC):
        if not module or module[0] in ("lib", "main", "bin"):
            continue
        top = module[0]
        if top not in RANK:
            problems.append(f"{path}: module `{top}` has no layer in scripts/check_layers.py")
            continue
        for target in paths_in(code, module):
            first = target[0] if target else None
            if first in RANK and first != top and RANK[first] >= RANK[top]:
                problems.append(
                    f"{path}: `{top}` (layer {RANK[top]}) uses `crate::{first}` (layer {RANK[first]})"
                )
    sibling_circles(SRC, problems)
    sibling_circles(ENGINE_SRC, problems)
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
    print(f"layers ok: {len(RANK)} server modules in {len(LAYERS)} layers, no circles but the {len(KNOWN_CIRCLES)} listed, engine free of I/O crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
