#!/usr/bin/env bash
# Runs the README's walk-through (the ```sh blocks of "A five-minute walk-through") as
# one script against the service at $B with the admin token $ADMIN, so the README cannot
# drift from the product. `scripts/run &` is skipped (scripts/contract started a
# service). Every curl of the walk-through goes through a recorder (its arguments,
# status, headers and body kept in a folder), and tests/contract/readme_check.py then
# checks each step's answer — its status and the fields that say the step did what it
# is for — and that no call is left unchecked and no step is missing. Calls to GitHub
# may fail offline: their answer must then be the documented `upstream_failed`.
# Bounded: each curl at most LOOPGATE_README_CURL_SECONDS (60), the whole walk-through
# LOOPGATE_README_SECONDS (600). LOOPGATE_README names another README to run (a draft).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B must be the service URL}" "${ADMIN:?ADMIN must be its admin token}"
script=$(awk '
  /^## A five-minute walk-through/ { on = 1; next }
  /^## / { on = 0 }
  on && /^```sh/ { code = 1; next }
  on && /^```/ { code = 0; next }
  on && code && !/^scripts\/run/ { print }
' "${LOOPGATE_README:-README.md}")
[ -n "$script" ] || { echo "README walk-through not found" >&2; exit 1; }
calls=$(mktemp -d)
trap 'rm -rf "$calls"' EXIT
# the recorder: the walk-through's own curl, with the answer also kept as NNN.*
recorder='
curl() {
  local n rc=0
  n=$(printf "%03d" $(($(find "$README_CALLS" -name "*.args" | wc -l) + 1)))
  printf "%s\0" "$@" >"$README_CALLS/$n.args"
  command curl --max-time "$README_CURL_SECONDS" -o "$README_CALLS/$n.body" \
    -D "$README_CALLS/$n.head" -w "%{http_code}" "$@" >"$README_CALLS/$n.status" || rc=$?
  echo "$rc" >"$README_CALLS/$n.exit"
  [ ! -f "$README_CALLS/$n.body" ] || cat "$README_CALLS/$n.body"
  return "$rc"
}
'
seconds=${LOOPGATE_README_SECONDS:-600}
rc=0
out=$(README_CALLS="$calls" README_CURL_SECONDS="${LOOPGATE_README_CURL_SECONDS:-60}" \
  timeout "$seconds" bash -euo pipefail -c "$recorder$script
for v in ORG KEY DEP PRV TOOL AGT RT; do
  val=\${!v:-}
  if [ -z \"\$val\" ] || [ \"\$val\" = null ]; then echo \"README walk-through: \$v is empty\" >&2; exit 1; fi
done
echo README-WALKTHROUGH-OK" 2>&1) || rc=$?
if [ "$rc" = 124 ]; then
  echo "$out" >&2
  echo "README walk-through: did not finish within $seconds s" >&2
  exit 1
fi
[ "$rc" = 0 ] || { echo "$out" >&2; exit 1; }
grep -q README-WALKTHROUGH-OK <<<"$out" || { echo "$out" >&2; exit 1; }
python3 tests/contract/readme_check.py "$calls"
