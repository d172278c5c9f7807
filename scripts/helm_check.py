"""Renders and validates the Helm chart in helm/loopgate (run by scripts/helm-check).

- `helm lint --strict` and `helm template` through Helm's own Go SDK (helm-python-sdk,
  which embeds it: the helm binary is not installable from the registries reachable here);
- the rendered manifests of several value sets validated against the Kubernetes OpenAPI
  schemas (kubernetes-validate, strict: unknown fields are errors);
- values.schema.json: the defaults pass, broken values are refused;
- what the chart promises: non-root, read-only root filesystem, resources, HPA, PDB, the
  migration hook, a NetworkPolicy whose egress is only what is configured, the replica
  count quotas are divided by, a grace period longer than the app's own.
"""

import base64
import json
import os
import sys

import helm_python as helm
import kubernetes_validate
import yaml

CHART = sys.argv[1] if len(sys.argv) > 1 else "helm/loopgate"
KUBE = "1.30.0"

SECRETS = {
    "secrets": {
        "LOOPGATE_ADMIN_TOKEN": "admin-token-0123456789",
        "LOOPGATE_CREDENTIAL_KEY": base64.b64encode(b"k" * 32).decode(),
        "LOOPGATE_TOKEN_SIGNING_KEY": "s" * 40,
        "DATABASE_URL": "postgres://u:p@db:5432/loopgate",
        "REDIS_URL": "redis://redis:6379",
    }
}
EGRESS = [
    {"to": [{"ipBlock": {"cidr": "10.0.0.0/16"}}], "ports": [{"port": 5432, "protocol": "TCP"}]},
    {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}], "ports": [{"port": 443, "protocol": "TCP"}]},
]
VALUE_SETS = {
    "defaults": SECRETS,
    "scaled": {
        **SECRETS,
        "autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 12},
        "ingress": {"enabled": True, "className": "nginx"},
        "networkPolicy": {"enabled": True, "egress": EGRESS},
        "grafanaDashboard": {"enabled": True},
        "config": {
            "trustedProxies": ["10.0.0.0/8", "fd00::/8"],
            "redisTimeoutMs": 1000,
            "resultTtlSeconds": 1800,
            "cacheMaxEntryBytes": 16777216,
        },
    },
    "existing-secret": {"existingSecret": "loopgate-secrets", "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
}
BROKEN = {
    "replicaCount 0": {**SECRETS, "replicaCount": 0},
    "writable root filesystem": {**SECRETS, "securityContext": {"readOnlyRootFilesystem": False, "allowPrivilegeEscalation": False}},
    "root user allowed": {**SECRETS, "podSecurityContext": {"runAsNonRoot": False}},
    "unknown key": {**SECRETS, "replicas": 3},
    "trusted proxy not an address": {**SECRETS, "config": {"trustedProxies": ["lb.example.com"]}},
    "redis timeout out of range": {**SECRETS, "config": {"redisTimeoutMs": 5}},
}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def docs(rendered):
    out = []
    for path, text in sorted(rendered.items()):
        if not path.endswith(".yaml"):
            continue
        for d in yaml.safe_load_all(text):
            if d:
                out.append((path, d))
    return out


def find(objs, kind):
    return [d for _, d in objs if d["kind"] == kind]


chart = helm.Chart.load(CHART)
check(chart.schema is not None, "values.schema.json is missing")

for name, values in VALUE_SETS.items():
    report = helm.lint(CHART, values, strict=True, kube_version="v" + KUBE)
    bad = [m for m in report.get("messages", []) if m.get("severity", 0) >= 2] + report.get("errors", [])
    check(not bad, f"lint {name}: {bad}")
    chart.validate_schema(values)
    objs = docs(chart.render(values, name="lg", namespace="apps", is_install=True))
    for path, d in objs:
        try:
            kubernetes_validate.validate(d, KUBE, strict=True)
        except Exception as e:  # the validator's errors say which field
            failures.append(f"{name}: {path} ({d['kind']}) is not a valid Kubernetes object: {e}")
    kinds = sorted(d["kind"] for _, d in objs)
    print(f"{name}: {len(objs)} manifests valid against Kubernetes {KUBE}: {', '.join(kinds)}")

    dep = find(objs, "Deployment")[0]
    pod = dep["spec"]["template"]["spec"]
    app = pod["containers"][0]
    check(pod["securityContext"]["runAsNonRoot"] is True, f"{name}: pods may run as root")
    check(app["securityContext"]["readOnlyRootFilesystem"] is True, f"{name}: writable root filesystem")
    check(app["securityContext"]["allowPrivilegeEscalation"] is False, f"{name}: privilege escalation allowed")
    check("requests" in app["resources"] and "limits" in app["resources"], f"{name}: no resources")
    env = {e["name"]: e.get("value") for e in app["env"]}
    grace = int(env["LOOPGATE_SHUTDOWN_GRACE_SECONDS"])
    check(pod["terminationGracePeriodSeconds"] > grace, f"{name}: the pod is killed before the app's grace period ends")
    # K1: the record journal is on a volume that outlives the container (the root is read-only)
    journal = env.get("LOOPGATE_RECORD_JOURNAL_DIR")
    mounts = {m["mountPath"]: m["name"] for m in app.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    check(journal is not None and journal in mounts and "emptyDir" in volumes.get(mounts[journal], {}),
          f"{name}: the record journal (K1) is not on a volume of its own")
    check(find(objs, "PodDisruptionBudget") != [], f"{name}: no PodDisruptionBudget")
    jobs = find(objs, "Job")
    check(jobs and "pre-upgrade" in jobs[0]["metadata"]["annotations"]["helm.sh/hook"], f"{name}: no migration hook")
    check(jobs and jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"], f"{name}: the hook does not migrate")

    if name == "scaled":
        hpa = find(objs, "HorizontalPodAutoscaler")
        check(hpa and hpa[0]["spec"]["maxReplicas"] == 12, "scaled: no HPA")
        check("replicas" not in dep["spec"], "scaled: the Deployment fixes replicas under an HPA")
        check(env["LOOPGATE_REPLICAS"] == "12", "scaled: quotas not divided by maxReplicas")
        check(env.get("LOOPGATE_TRUSTED_PROXIES") == "10.0.0.0/8,fd00::/8", "scaled: trusted proxies not passed")
        bounds = {"LOOPGATE_REDIS_TIMEOUT_MS": "1000", "LOOPGATE_RESULT_TTL_SECONDS": "1800", "LOOPGATE_CACHE_MAX_ENTRY_BYTES": "16777216"}
        check(all(env.get(k) == v for k, v in bounds.items()), "scaled: operational bounds not passed")
        dash = [c for c in find(objs, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")]
        with open(os.path.join(CHART, "dashboards", "loopgate.json")) as f:
            shipped = json.load(f)
        check(len(dash) == 1 and dash[0]["metadata"]["labels"].get("grafana_dashboard") == "1"
              and json.loads(dash[0]["data"]["loopgate.json"]) == shipped,
              "scaled: the Grafana dashboard ConfigMap does not hold dashboards/loopgate.json")
        pol = find(objs, "NetworkPolicy")
        check(len(pol) == 1, "scaled: no NetworkPolicy")
        if pol:
            spec = pol[0]["spec"]
            check(sorted(spec["policyTypes"]) == ["Egress", "Ingress"], "scaled: policy types")
            dns = [r for r in spec["egress"] if any(p.get("port") == 53 for p in r.get("ports", []))]
            rest = [r for r in spec["egress"] if r not in dns]
            check(len(dns) == 1 and rest == EGRESS, f"scaled: egress is not exactly DNS + the configured rules: {spec['egress']}")
    else:
        check(find(objs, "NetworkPolicy") == [], f"{name}: NetworkPolicy without being enabled")
        check(not any(c["metadata"]["name"].endswith("-dashboard") for c in find(objs, "ConfigMap")),
              f"{name}: a dashboard ConfigMap without being enabled")
        check(env["LOOPGATE_REPLICAS"] == "2", f"{name}: quotas not divided by replicaCount")
        check("LOOPGATE_TRUSTED_PROXIES" not in env, f"{name}: trusted proxies set without being configured")
        check("LOOPGATE_REDIS_TIMEOUT_MS" not in env, f"{name}: a bound set without being configured (the binary's default is the one owner)")

for what, values in BROKEN.items():
    try:
        chart.validate_schema(values)
        failures.append(f"values.schema.json accepts {what}")
    except helm.errors.HelmError:
        pass

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"helm chart ok: lint --strict, {len(VALUE_SETS)} value sets rendered and valid, {len(BROKEN)} broken value sets refused by values.schema.json")
