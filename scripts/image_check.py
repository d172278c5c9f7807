"""Checks the container image recipe without a container engine (none is installable here).

Run by scripts/image-check with the binary `cargo test` built. What it proves, and what not:

1. The Dockerfile (parsed by dockerfile-parse): a multi-stage build whose builder runs
   `cargo build --release --locked --bin loopgate` with a toolchain no older than the
   crate's `rust-version`; a final stage on a distroless base that copies only that binary and the embedding
   model directory (D5; LOOPGATE_EMBEDDING_MODEL_DIR points into it),
   runs it by absolute path as a numeric non-root uid:gid equal to the chart's
   `runAsUser`/`runAsGroup`.
2. The binary links nothing the runtime base lacks: its ELF NEEDED libraries are within
   what distroless/cc-debian12 ships, and it asks for no glibc newer than Debian 12's 2.36.
3. A smoke run shaped like the chart's pod (when root, so a mount namespace can be made):
   the binary copied alone into an empty tree, run as that uid with the root filesystem
   READ-ONLY, the Deployment's own `args` and `env` as rendered by the chart (secrets and
   the database replaced by test values), an empty environment otherwise: it migrates,
   serves `/healthz` and `/readyz`, and exits 0 on SIGTERM. The migration Job's `args`
   are run the same way first.

Not proved: the image is never built, so the base image's contents are taken from its
documentation (the library list below) and BuildKit cache mounts are not exercised.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request

import helm_python as helm
import yaml
from dockerfile_parse import DockerfileParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.abspath(sys.argv[1])
DATABASE_URL = os.environ.get("DATABASE_URL", "")
# distroless/cc-debian12: glibc (libc, libm, libpthread, libdl, librt, libutil, the loader),
# libgcc_s, libstdc++, libgomp and OpenSSL 3 on top of static-debian12.
DISTROLESS_CC = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "ld-linux-x86-64.so.2", "libgcc_s.so.1", "libstdc++.so.6", "libgomp.so.1",
    "libssl.so.3", "libcrypto.so.3",
}
DEBIAN12_GLIBC = (2, 36)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


# --- 1. the Dockerfile -------------------------------------------------------------------
df = DockerfileParser(path=os.path.join(ROOT, "Dockerfile"))
stages = [i for i in df.structure if i["instruction"] == "FROM"]
check(len(stages) >= 2, "Dockerfile is not multi-stage")
final_from = stages[-1]["value"].split()[0]
check("distroless" in final_from, f"final stage is not distroless: {final_from}")
final = [i for i in df.structure if i["startline"] > stages[-1]["startline"]]
builder = [i for i in df.structure if stages[0]["startline"] <= i["startline"] < stages[-1]["startline"]]

runs = " ".join(i["value"] for i in builder if i["instruction"] == "RUN")
check(re.search(r"cargo build --release --locked --bin loopgate", runs), "builder does not build the locked release binary")
check(os.path.exists(os.path.join(ROOT, "Cargo.lock")), "--locked needs a committed Cargo.lock")
m = re.match(r"rust:(\d+)\.(\d+)", stages[0]["value"])
with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
    want = tomllib.load(f)["package"].get("rust-version", "0.0")
want = tuple(int(x) for x in want.split(".")[:2])
check(m and (int(m[1]), int(m[2])) >= want, f"builder toolchain {stages[0]['value']} older than rust-version {want}")

copies = [i["value"].split() for i in final if i["instruction"] == "COPY"]
# the binary, and (D5) the embedding model the builder fetched with scripts/setup-model
MODELS = "/opt/loopgate/models"
check(len(copies) == 2 and all(c[0].startswith("--from=") for c in copies)
      and copies[1][1:] == [MODELS, MODELS],
      f"final stage copies more than the binary and the model directory: {copies}")
check(re.search(r"scripts/setup-model " + re.escape(MODELS) + r"/\S+", runs),
      "builder does not fetch the embedding model with scripts/setup-model")
envs = " ".join(i["value"] for i in final if i["instruction"] == "ENV")
check(re.search(r"LOOPGATE_EMBEDDING_MODEL_DIR=" + re.escape(MODELS) + "/", envs),
      "final stage does not point LOOPGATE_EMBEDDING_MODEL_DIR at the copied model")
users = [i["value"] for i in final if i["instruction"] == "USER"]
entry = [i["value"] for i in final if i["instruction"] == "ENTRYPOINT"]
cmd = [i["value"] for i in final if i["instruction"] == "CMD"]
check(users, "final stage has no USER")
uid, _, gid = (users[-1] if users else "0").partition(":")
check(uid.isdigit() and int(uid) != 0 and (gid or uid).isdigit(), f"USER {users} is not a numeric non-root uid:gid")
entry_argv = yaml.safe_load(entry[-1]) if entry else []
check(copies and entry_argv and entry_argv[0] == copies[0][-1], f"ENTRYPOINT {entry_argv} is not the copied binary")

values = yaml.safe_load(open(os.path.join(ROOT, "helm/loopgate/values.yaml")))
psc = values["podSecurityContext"]
check(str(psc["runAsUser"]) == uid and str(psc["runAsGroup"]) == (gid or uid),
      f"chart runs as {psc['runAsUser']}:{psc['runAsGroup']}, image as {users}")
print(f"Dockerfile: {len(stages)} stages, runtime {final_from}, USER {users[-1] if users else '-'}, "
      f"ENTRYPOINT {entry_argv} {cmd}")

# --- 2. the binary's dynamic dependencies ------------------------------------------------
dyn = subprocess.run(["readelf", "-d", "-W", BINARY], capture_output=True, text=True, check=True).stdout
needed = set(re.findall(r"\(NEEDED\).*\[(.+?)\]", dyn))
check(needed <= DISTROLESS_CC, f"binary needs libraries distroless/cc lacks: {sorted(needed - DISTROLESS_CC)}")
syms = subprocess.run(["readelf", "-V", "-W", BINARY], capture_output=True, text=True, check=True).stdout
glibc = max((tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", syms)), default=(0,))
check(glibc <= DEBIAN12_GLIBC, f"binary needs glibc {glibc}, Debian 12 has {DEBIAN12_GLIBC}")
print(f"binary: links {sorted(needed)}; newest glibc symbol {'.'.join(map(str, glibc))}")

# --- 3. a smoke run shaped like the chart's pod --------------------------------------------
SECRETS = {
    "LOOPGATE_ADMIN_TOKEN": "image-check-admin-token",
    "LOOPGATE_CREDENTIAL_KEY": "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=",
    "LOOPGATE_TOKEN_SIGNING_KEY": "s" * 40,
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pod_spec():
    chart = helm.Chart.load(os.path.join(ROOT, "helm/loopgate"))
    rendered = chart.render({"secrets": {**SECRETS, "DATABASE_URL": "postgres://placeholder"},
                             "config": {"trustedProxies": ["10.0.0.0/8", "fd00::/8"]}},
                            name="lg", namespace="apps", is_install=True)
    objs = [d for p, t in rendered.items() if p.endswith(".yaml") for d in yaml.safe_load_all(t) if d]
    dep = next(d for d in objs if d["kind"] == "Deployment")
    job = next(d for d in objs if d["kind"] == "Job")
    return dep["spec"]["template"]["spec"]["containers"][0], job["spec"]["template"]["spec"]["containers"][0]


def sandboxed(argv, env, tree, writable=()):
    """argv run as the image's uid with / read-only, in a fresh mount namespace; the
    `writable` directories (the chart's volumes, placed in the tree) stay writable."""
    binds = "".join(f"mount --bind {d} {d} && " for d in writable)
    inner = (f"{binds}mount -o remount,bind,ro / && cd / && exec setpriv --reuid={uid} --regid={gid or uid} "
             f"--clear-groups --no-new-privs env -i " + " ".join(f"{k}='{v}'" for k, v in env.items())
             + f" {tree}/usr/local/bin/loopgate " + " ".join(argv))
    return subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except Exception:
        return None


def smoke():
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if os.geteuid() != 0 or probe.returncode != 0 or not DATABASE_URL:
        print("smoke run skipped: it needs root (a mount namespace) and DATABASE_URL")
        return
    app, migrate = pod_spec()
    db = f"loopgate_image_check_{os.getpid()}"
    subprocess.run(["psql", DATABASE_URL, "-qc", f'CREATE DATABASE "{db}"'], check=True)
    tree = tempfile.mkdtemp(prefix="lg-image-")
    try:
        os.chmod(tree, 0o755)
        os.makedirs(f"{tree}/usr/local/bin")
        shutil.copy(BINARY, f"{tree}/usr/local/bin/loopgate")
        os.chmod(f"{tree}/usr/local/bin/loopgate", 0o755)
        port = free_port()
        env = {e["name"]: e["value"] for e in app["env"]}
        env.update(SECRETS, DATABASE_URL=DATABASE_URL.rsplit("/", 1)[0] + "/" + db,
                   LOOPGATE_BIND=f"127.0.0.1:{port}", LOOPGATE_SHUTDOWN_GRACE_SECONDS="2")
        # the chart's volumes (emptyDir, e.g. the K1 record journal) as directories of the
        # tree owned by the uid, writable under the read-only root; /tmp is the host's
        writable = []
        for m in app.get("volumeMounts", []):
            if m["mountPath"] == "/tmp":
                continue
            d = tree + m["mountPath"]
            os.makedirs(d)
            os.chown(d, int(uid), int(gid or uid))
            writable.append(d)
            env = {k: (d if v == m["mountPath"] else v) for k, v in env.items()}
        job = sandboxed(migrate["args"], env, tree)
        out, _ = job.communicate(timeout=120)
        check(job.returncode == 0, f"migration job args {migrate['args']} failed read-only as {uid}: {out.strip()}")
        p = sandboxed(app["args"], env, tree, writable)
        ok = False
        for _ in range(120):
            if get(f"http://127.0.0.1:{port}/healthz") == 200 and get(f"http://127.0.0.1:{port}/readyz") == 200:
                ok = True
                break
            if p.poll() is not None:
                break
            time.sleep(0.5)
        if p.poll() is None:
            # the namespace's sh exec'd setpriv → env → loopgate: the child pid is loopgate
            os.kill(p.pid, signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            check(False, "did not exit within 30 s of SIGTERM")
        check(ok, f"args {app['args']} did not serve /healthz and /readyz read-only as {uid}: {out.strip()[-2000:]}")
        check(p.returncode == 0, f"exit status {p.returncode} after SIGTERM")
        print(f"smoke: migrate + serve as {uid}:{gid or uid} with a read-only root, chart env "
              f"({len(env)} vars): healthy, ready, exit {p.returncode} on SIGTERM")
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        subprocess.run(["psql", DATABASE_URL, "-qc", f'DROP DATABASE IF EXISTS "{db}"'], capture_output=True)


smoke()
if failures:
    print("image check FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
    sys.exit(1)
print("image check passed")
