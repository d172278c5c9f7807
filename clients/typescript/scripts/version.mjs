// The package's version is the contract's: package.json `version` must equal
// openapi/openapi.json `info.version` (bump both together).
import { readFileSync } from 'node:fs';
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const doc = JSON.parse(readFileSync(new URL('../../../openapi/openapi.json', import.meta.url), 'utf8'));
if (pkg.version !== doc.info.version) {
  console.error(`clients/typescript: version ${pkg.version} is not the contract's ${doc.info.version} (openapi/openapi.json info.version)`);
  process.exit(1);
}
