// The Studio's only way to the server: the public REST API, with the org key as a
// bearer token. The key lives in this module and in sessionStorage (gone when the tab
// closes), never in a URL, a log or localStorage; signOut() forgets it.
const STORE = 'loopgate.studio.key';
let key = sessionStorage.getItem(STORE);

export const signedIn = () => Boolean(key);
export function signIn(k) {
  key = k;
  sessionStorage.setItem(STORE, k);
}
export function signOut() {
  key = null;
  sessionStorage.removeItem(STORE);
}

/** An API error: the message is the problem's `detail`, exactly as the API wrote it. */
export class ApiError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.problem = problem;
    this.code = problem.code;
    this.status = status;
  }
}

async function problemOf(r) {
  const text = await r.text();
  try {
    const p = JSON.parse(text);
    if (p && typeof p === 'object') return p;
  } catch (_) { /* not JSON: keep the text */ }
  return { detail: text || r.statusText, status: r.status };
}

function headers(extra) {
  const h = { accept: 'application/json', ...extra };
  if (key) h.authorization = `Bearer ${key}`;
  return h;
}

/** One request; JSON in and out. `raw` sends a string body as is (an OpenAPI document). */
export async function api(method, path, body, { raw = false, contentType } = {}) {
  const init = { method, headers: headers(), cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    init.body = raw ? body : JSON.stringify(body);
    init.headers['content-type'] = raw ? (contentType || 'application/yaml') : 'application/json';
  }
  const r = await fetch(path, init);
  if (!r.ok) throw new ApiError(await problemOf(r), r.status);
  if (r.status === 204) return null;
  const text = await r.text();
  return text ? JSON.parse(text) : null;
}

/** Every item of a cursor-paginated list, following `cursor` while `has_more`, at most
 * `max` items (a list is never read without a bound). */
export async function listAll(path, max = 1000) {
  const items = [];
  let cursor = null;
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const page = await api('GET', `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    if (!page.has_more || !page.cursor || items.length >= max) break;
    cursor = page.cursor;
  }
  return items.slice(0, max);
}

/** A tool call streamed as the AI SDK UI-message stream: calls `onChunk` with every chunk
 * (`data-tool-loop-progress` among them) and resolves with the final chunk that carries
 * the output or the error. */
export async function streamToolCall(agentId, threadId, body, onChunk, signal) {
  const r = await fetch(
    `/v1/agents/${encodeURIComponent(agentId)}/threads/${encodeURIComponent(threadId)}/tool-calls`,
    {
      method: 'POST',
      headers: headers({ accept: 'text/event-stream', 'content-type': 'application/json' }),
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      signal,
    },
  );
  if (!r.ok) throw new ApiError(await problemOf(r), r.status);
  if (!(r.headers.get('content-type') || '').startsWith('text/event-stream')) {
    // the server answered in JSON (e.g. a retrieval tool): one final chunk
    const j = await r.json();
    const done = { type: 'tool-output-available', toolCallId: j.id, output: j.result };
    onChunk(done);
    return done;
  }
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let last = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data || data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      onChunk(chunk);
      if (chunk.type === 'tool-output-available' || chunk.type === 'tool-output-error') last = chunk;
    }
  }
  if (!last) throw new ApiError({ detail: 'the stream ended before the tool call finished' }, 0);
  return last;
}

/** A tool call answered in JSON (`queryToolResult`, for instance): its `result`. */
export async function callTool(agentId, threadId, name, args) {
  const r = await api(
    'POST',
    `/v1/agents/${encodeURIComponent(agentId)}/threads/${encodeURIComponent(threadId)}/tool-calls`,
    { name, arguments: args },
  );
  return r.result;
}

export const enc = encodeURIComponent;
