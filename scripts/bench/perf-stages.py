#!/usr/bin/env python3
"""Where loopgate's CPU goes, from a `perf record --call-graph dwarf` profile.

Usage: perf-stages.py PERF_DATA [FOLDED_OUT]. Runs `perf script` on PERF_DATA and
attributes each sample to the innermost frame that names a part of a call (the table
below, checked from the leaf outwards), then prints each part's share of loopgate's
samples as a markdown table. FOLDED_OUT, when given, receives the stacks folded one per
line (`root;...;leaf count`), the input of any flame graph renderer (inferno,
flamegraph.pl, speedscope). Used by scripts/bench-load (BENCH_PERF) and kept in
docs/performance.md ("Where a call's time goes")."""
import collections
import re
import subprocess
import sys

# (part, pattern): the first pattern a frame matches, from the leaf outwards, names the part
PARTS = [
    ("Redis client (commands, replies)", r"\bredis::"),
    ("Postgres client (record writes)", r"sqlx|call_records|store::tool_calls"),
    ("authentication", r"api::extract::identify|auth::tokens|auth::verified|jsonwebtoken"),
    ("rate limit", r"api::extract::admit|api::extract::throttle|quota::"),
    ("agent and thread", r"agent_in_thread|agent_memory|load_agent|memory_hit::.*confirmed"),
    ("presentation and size guard", r"present_json|present_result|PresentedTemplate|loopgate_engine::present"),
    ("result store", r"stored_results|kv::Kv"),
    ("cache lookup", r"cache_memory|dataset_cache|run_tool::.*cached|memory_hit"),
    ("upstream request", r"reqwest|hyper_util|hyper::|upstream::|engine_ports"),
    ("engine (parse, walk)", r"loopgate_engine"),
    ("JSON (serde)", r"serde_json|serde_core"),
]
# asked only when no frame names one of the parts above: who ran the code, not what for
OUTER = [
    ("tracing and metrics", r"tracing_core|tracing_subscriber|tracing_opentelemetry|prometheus_client|telemetry::|tracing::span"),
    ("HTTP server (actix)", r"actix_http|actix_web|actix_server|actix_router|regex_lite"),
    ("async runtime (tokio, mio: polling, waking, parking)", r"tokio::|mio::"),
]
PATTERNS = [(p, re.compile(r)) for p, r in PARTS]
OUTER_PATTERNS = [(p, re.compile(r)) for p, r in OUTER]


def samples(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso", "--no-inline"],
                         capture_output=True, text=True, check=True).stdout
    for block in out.split("\n\n"):
        lines = [l.strip() for l in block.strip().split("\n") if l.strip()]
        if len(lines) < 2:
            continue
        frames = [l.split(None, 1)[1] if " " in l else l for l in lines[1:]]
        yield lines[0].split()[0], frames


def main():
    data = sys.argv[1]
    folded = collections.Counter()
    parts = collections.Counter()
    kernel = collections.Counter()
    total = 0
    for thread, frames in samples(data):
        total += 1
        names = [re.sub(r"\s*\([^()]*\)$", "", f).replace(";", ",") for f in reversed(frames)]
        folded[";".join([thread] + names)] += 1
        part = next((p for f in frames for p, rx in PATTERNS if rx.search(f)), None)
        part = part or next((p for f in frames for p, rx in OUTER_PATTERNS if rx.search(f)), "other")
        parts[part] += 1
        if "kernel.kallsyms" in frames[0]:
            kernel[part] += 1
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            for stack, n in folded.most_common():
                f.write(f"{stack} {n}\n")
    print(f"| part of loopgate's CPU ({total} samples) | share | of which in the kernel |")
    print("|---|---|---|")
    for part, n in parts.most_common():
        print(f"| {part} | {100 * n / total:.1f} % | {100 * kernel[part] / total:.1f} % |")


main()
