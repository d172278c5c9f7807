#!/usr/bin/env bash
# The package as published: `npm pack` (prepack builds it), then a scratch project that
# installs the tarball and nothing of this folder, type-checks an ESM (.mts) and a CJS
# (.cts) consumer against its declarations (each names a path that does not exist under
# @ts-expect-error, so types that were `any` fail), and runs both against the service at
# LOOPGATE_URL with the org key LOOPGATE_KEY. Bounded by the caller (scripts/contract).
set -euo pipefail
t0=$SECONDS
here="$(cd "$(dirname "$0")" && pwd)"
pkg="$(dirname "$here")"
: "${LOOPGATE_URL:?}" "${LOOPGATE_KEY:?}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
tarball="$(cd "$pkg" && npm pack --silent --pack-destination "$scratch" | tail -n 1)"
tar -tzf "$scratch/$tarball" | sort >"$scratch/files"
for f in package/package.json package/README.md package/dist/esm/index.js package/dist/esm/index.d.ts \
  package/dist/cjs/index.js package/dist/cjs/index.d.ts package/dist/cjs/package.json; do
  grep -qx "$f" "$scratch/files" || { echo "pack-test: $f missing from $tarball" >&2; exit 1; }
done
if grep -q '^package/\(src\|test\|dist/test\)/' "$scratch/files"; then
  echo "pack-test: sources or tests packed into $tarball" >&2; exit 1
fi
ts="$(node -p 'require(process.argv[1]).devDependencies.typescript' "$pkg/package.json")"
types_node="$(node -p 'require(process.argv[1]).devDependencies["@types/node"]' "$pkg/package.json")"
cd "$scratch"
printf '{"name":"scratch","private":true,"type":"module"}\n' >package.json
echo "pack-test: packed in $((SECONDS - t0)) s" >&2
npm install --no-audit --no-fund --loglevel=error --prefer-offline \
  "./$tarball" "typescript@$ts" "@types/node@$types_node" >/dev/null
cp "$here/esm.mts" "$here/cjs.cts" "$here/tsconfig.json" .
echo "pack-test: installed in $((SECONDS - t0)) s" >&2
npx tsc -p .
node esm.mjs
node cjs.cjs
echo "pack-test: $tarball installs, type-checks and runs as ESM and CJS ($((SECONDS - t0)) s)"
