// loopgate's typed client: `paths`/`components` are generated from openapi/openapi.json
// (`npm run generate`); `createLoopgate` is openapi-fetch bound to a bearer token;
// `listAll` follows cursors until `has_more` is false; `streamToolCall` reads a streamed
// tool call (the AI SDK UI-message stream) with the `ai` package's own reader.
import createClient from 'openapi-fetch';
import { readUIMessageStream, uiMessageChunkSchema, type UIMessage } from 'ai';
import { parseJsonEventStream } from '@ai-sdk/provider-utils';
import type { paths, components } from './schema.js';

export type { paths, components } from './schema.js';
export type Problem = components['schemas']['Problem'];
export type Loopgate = ReturnType<typeof createLoopgate>;

/** A typed client for `baseUrl`, sending `Authorization: Bearer <token>`. */
export function createLoopgate(baseUrl: string, token: string) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}

/** A problem+json answer (RFC 9457) as an exception. */
export class LoopgateError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> | undefined,
  ) {
    super(`${status} ${problem?.code ?? ''}: ${problem?.detail ?? 'request failed'}`);
  }
}

/** One page of any list endpoint. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  cursor?: string | null;
  total?: number | null;
}

/**
 * Every row of a cursor-paginated list: calls `page(cursor)` — first with `undefined`,
 * then with each returned `cursor` — until `has_more` is false.
 *
 *   const tools = await listAll((cursor) => lg.GET('/v1/tools', { params: { query: { cursor, limit: 200 } } }));
 */
export async function listAll<T>(
  page: (cursor: string | undefined) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>,
  maxPages = 100_000,
): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const { data, error, response } = await page(cursor);
    if (!data) throw new LoopgateError(response.status, error as Partial<Problem>);
    rows.push(...data.data);
    if (!data.has_more || !data.cursor) return rows;
    cursor = data.cursor;
  }
  throw new Error(`listAll: more than ${maxPages} pages`);
}

export interface ToolCall {
  agentId: string;
  threadId: string;
  name: string;
  arguments?: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * Runs a tool call as a stream and yields the assistant message as it grows (progress
 * parts `data-tool-loop-progress`, then the tool part with its output), read by the
 * `ai` package's `readUIMessageStream`; every chunk is validated against its schema.
 */
export async function* streamToolCall(lg: Loopgate, call: ToolCall): AsyncGenerator<UIMessage> {
  const { data, error, response } = await lg.POST('/v1/agents/{agent_id}/threads/{thread_id}/tool-calls', {
    params: { path: { agent_id: call.agentId, thread_id: call.threadId } },
    body: { name: call.name, arguments: (call.arguments ?? {}) },
    headers: { accept: 'text/event-stream' },
    parseAs: 'stream',
    signal: call.signal,
  });
  if (!response.ok || !data) throw new LoopgateError(response.status, error as Partial<Problem>);
  const stream = data as unknown as ReadableStream<Uint8Array>;
  const chunks = parseJsonEventStream({ stream, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(parsed, controller) {
        if (!parsed.success) throw parsed.error;
        controller.enqueue(parsed.value);
      },
    }),
  );
  yield* readUIMessageStream({ stream: chunks, terminateOnError: true });
}
