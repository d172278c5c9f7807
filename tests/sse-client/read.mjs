// Reads one loopgate tool-call stream with the `ai` package's own client code:
// parseJsonEventStream (validating every chunk against uiMessageChunkSchema) piped
// into readUIMessageStream. Prints {status, headers, chunks, message} as JSON.
// Usage: node read.mjs <url> <bearer token> <json body>
import { readUIMessageStream, uiMessageChunkSchema } from 'ai';
import { parseJsonEventStream } from '@ai-sdk/provider-utils';

const [url, token, body] = process.argv.slice(2);
const res = await fetch(url, {
  method: 'POST',
  headers: {
    authorization: `Bearer ${token}`,
    accept: 'text/event-stream',
    'content-type': 'application/json',
  },
  body,
});
const headers = Object.fromEntries(res.headers);
const chunks = [];
const stream = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(parsed, controller) {
      if (!parsed.success) throw parsed.error;
      chunks.push(structuredClone(parsed.value)); // the reader updates data parts in place
      controller.enqueue(parsed.value);
    },
  }),
);
let message = null;
for await (const m of readUIMessageStream({ stream, terminateOnError: true })) {
  message = m;
}
process.stdout.write(JSON.stringify({ status: res.status, headers, chunks, message }));
