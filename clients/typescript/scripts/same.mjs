// Fails when the committed generated types differ from a fresh generation: run
// `npm run generate` after changing openapi/openapi.json.
import { readFileSync } from 'node:fs';
const [a, b] = process.argv.slice(2);
if (readFileSync(a, 'utf8') !== readFileSync(b, 'utf8')) {
  console.error(`${a} is out of date with openapi/openapi.json: run \`npm run generate\` in clients/typescript`);
  process.exit(1);
}
