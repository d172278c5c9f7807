// A CommonJS consumer of the packed package (pack-test/run.sh): compiled to `require`,
// resolved through the `require` condition, types included.
import { createLoopgate, listAll } from '@loopgate/client';

async function main(): Promise<void> {
  const lg = createLoopgate(process.env.LOOPGATE_URL!, process.env.LOOPGATE_KEY!);
  const providers = await listAll((cursor) => lg.GET('/v1/providers', { params: { query: { cursor, limit: 200 } } }));
  // @ts-expect-error: not a path of the contract (fails to compile if the types were `any`)
  void lg.GET('/v1/no-such-path');
  if (typeof require !== 'function') throw new Error('not CommonJS');
  console.log(`cjs: ${providers.length} providers`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
