#!/usr/bin/env bash
# Runs the README's walk-through (the ```sh blocks of "A five-minute walk-through") as
# one script against the service at $B with the admin token $ADMIN, so the README cannot
# drift from the product. `scripts/run &` is skipped (scripts/contract started a
# service). Upstream calls to GitHub may fail offline; the checks below cover what the
# walk-through sets up, which must all succeed.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B must be the service URL}" "${ADMIN:?ADMIN must be its admin token}"
script=$(awk '
  /^## A five-minute walk-through/ { on = 1; next }
  /^## / { on = 0 }
  on && /^```sh/ { code = 1; next }
  on && /^```/ { code = 0; next }
  on && code && !/^scripts\/run/ { print }
' README.md)
[ -n "$script" ] || { echo "README walk-through not found" >&2; exit 1; }
out=$(bash -euo pipefail -c "$script
for v in ORG KEY DEP PRV TOOL AGT RT; do
  val=\${!v:-}
  if [ -z \"\$val\" ] || [ \"\$val\" = null ]; then echo \"README walk-through: \$v is empty\" >&2; exit 1; fi
done
echo README-WALKTHROUGH-OK" 2>&1) || { echo "$out" >&2; exit 1; }
grep -q README-WALKTHROUGH-OK <<<"$out" || { echo "$out" >&2; exit 1; }
echo "README walk-through: every step ran (ORG KEY DEP PRV TOOL AGT RT set)" >&2
