// The playground: pick an agent, a thread and a tool, fill the arguments from the tool's
// schema (reserved arguments such as _all_pages included, as the model sees them), run
// it streamed with a live progress bar fed by `data-tool-loop-progress`, read the
// verdict, the rows, query the stored result (queryToolResult) and continue a walk a
// bound stopped (_continue).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, callTool, enc, listAll, streamToolCall } from './api.js';
import { ErrorBox, Field, RowsTable, Select, VerdictBadge, html, parseJson, useLoad, verdictOf } from './ui.js';

const newThread = () => `studio-${Math.random().toString(36).slice(2, 10)}`;

/** One input per top-level property of the schema; objects and arrays as JSON. */
function ArgsForm({ schema, values, setValues }) {
  const req = new Set(schema?.required || []);
  const props = Object.entries(schema?.properties || {});
  if (!props.length) return html`<p class="muted">This tool takes no arguments.</p>`;
  const set = (k, v) => setValues({ ...values, [k]: v });
  return html`<fieldset><legend>Arguments</legend>${props.map(([k, p]) => {
    const id = `arg-${k}`;
    const ty = Array.isArray(p?.type) ? p.type.find((t) => t !== 'null') : p?.type;
    const label = `${k}${req.has(k) ? ' (required)' : ''}`;
    const hintId = `${id}-hint`;
    const hint = p?.description ? html`<div id=${hintId} class="muted">${p.description.slice(0, 300)}</div>` : null;
    if (ty === 'boolean') {
      return html`<div><label class="inline" for=${id}><input type="checkbox" id=${id} checked=${values[k] === true}
        aria-describedby=${hint ? hintId : undefined} onChange=${(e) => set(k, e.currentTarget.checked)} /> ${label}</label>${hint}</div>`;
    }
    if (ty === 'object' || ty === 'array' || (!ty && (p?.properties || p?.items))) {
      return html`<div><label for=${id}>${label} <span class="muted">(JSON)</span></label>
        <textarea id=${id} aria-describedby=${hint ? hintId : undefined} value=${values[k] ?? ''} onInput=${(e) => set(k, e.currentTarget.value)}></textarea>${hint}</div>`;
    }
    return html`<div><label for=${id}>${label}</label>
      <input id=${id} type=${ty === 'integer' || ty === 'number' ? 'number' : 'text'} value=${values[k] ?? ''}
        aria-describedby=${hint ? hintId : undefined} onInput=${(e) => set(k, e.currentTarget.value)} />${hint}</div>`;
  })}</fieldset>`;
}

function argsFrom(schema, values) {
  const out = {};
  for (const [k, p] of Object.entries(schema?.properties || {})) {
    const v = values[k];
    if (v === undefined || v === '' || v === false && !(schema.required || []).includes(k)) continue;
    const ty = Array.isArray(p?.type) ? p.type.find((t) => t !== 'null') : p?.type;
    if (ty === 'integer' || ty === 'number') out[k] = Number(v);
    else if (ty === 'boolean') out[k] = v === true;
    else if (ty === 'object' || ty === 'array' || (!ty && (p?.properties || p?.items))) out[k] = parseJson(v, k);
    else out[k] = v;
  }
  return out;
}

/** The live progress of a walk: page of its maximum while it runs (each chunk of
 * `data-tool-loop-progress`), full when the walk ended complete, left where it stopped
 * when a bound ended it. */
function Progress({ p, end }) {
  if (!p && !end) return null;
  const cur = p || { page: 0, pagesMax: 1, items: 0, requests: 0, requestsMax: 0, elapsedMs: 0 };
  const max = cur.pagesMax || Math.max(cur.page, 1);
  const full = end?.complete === true;
  const value = full ? max : Math.min(cur.page, max);
  const state = end ? (full ? 'finished' : 'stopped') : 'running';
  const text = end
    ? full ? `Walk finished: every page read, ${end.count ?? cur.items} items.`
      : `Walk stopped by ${end.stoppedBy || 'a bound'} after page ${cur.page}, ${end.count ?? cur.items} items.`
    : `Page ${cur.page} of at most ${cur.pagesMax} · ${cur.items} items · ${cur.requests} of at most ${cur.requestsMax} requests · ${(cur.elapsedMs / 1000).toFixed(1)} s`;
  return html`<div class="panel" aria-labelledby="progress-h">
    <h3 id="progress-h">Walk progress</h3>
    <label for="walk-progress">Pages walked</label>
    <progress id="walk-progress" max=${max} value=${value} data-state=${state} data-page=${cur.page} data-pages-max=${cur.pagesMax}></progress>
    <p role="status" aria-live="polite" id="progress-text">${text}</p>
  </div>`;
}

function QueryStored({ agentId, threadId, resultId }) {
  const [fields, setFields] = useState('');
  const [filter, setFilter] = useState('');
  const [aggregate, setAggregate] = useState('');
  const [offset, setOffset] = useState('0');
  const [limit, setLimit] = useState('20');
  const [res, setRes] = useState(null);
  const [error, setError] = useState(null);
  async function run(e) {
    e.preventDefault();
    setError(null); setRes(null);
    try {
      const args = { resultId, offset: Number(offset || 0), limit: Number(limit || 20) };
      if (fields.trim()) args.fields = fields.split(',').map((s) => s.trim()).filter(Boolean);
      const f = parseJson(filter, 'filter');
      if (f !== undefined) args.filter = f;
      const a = parseJson(aggregate, 'aggregate');
      if (a !== undefined) args.aggregate = a;
      setRes(await callTool(agentId, threadId, 'queryToolResult', args));
    } catch (err) { setError(err); }
  }
  return html`<form class="panel" onSubmit=${run} aria-labelledby="query-h">
    <h2 id="query-h">Query the stored result</h2>
    <p class="muted">Result <code>${resultId}</code>, read with <code>queryToolResult</code>.</p>
    <div class="row">
      <${Field} label="Fields (comma-separated)" id="q-fields" value=${fields} onInput=${setFields} />
      <${Field} label="Offset" id="q-offset" type="number" min="0" value=${offset} onInput=${setOffset} />
      <${Field} label="Limit" id="q-limit" type="number" min="1" value=${limit} onInput=${setLimit} />
    </div>
    <label for="q-filter">Filter (JSON clauses, e.g. [{"field": "status", "op": "eq", "value": "open"}])</label>
    <textarea id="q-filter" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)}></textarea>
    <label for="q-aggregate">Aggregate (JSON, e.g. {"count": true, "sum": ["amount"], "group_by": "status"})</label>
    <textarea id="q-aggregate" value=${aggregate} onInput=${(e) => setAggregate(e.currentTarget.value)}></textarea>
    <button type="submit">Run query</button>
    <${ErrorBox} error=${error} />
    ${res ? html`<div aria-live="polite">
      ${Array.isArray(res.items) ? html`<p id="query-total">${res.total} stored rows match; showing ${res.items.length} from offset ${res.offset}${res.has_more ? ' (more available)' : ''}.</p>
        <${RowsTable} rows=${res.items} caption="Query result" />` : null}
      ${res.aggregates ? html`<p>${res.sound ? 'Totals over the complete stored walk.' : 'Not totals: the stored walk was partial.'} ${res.note || ''}</p>
        <pre aria-label="Aggregates">${JSON.stringify({ aggregates: res.aggregates, groups: res.groups, sound: res.sound }, null, 2)}</pre>` : null}
    </div>` : null}
  </form>`;
}

export function PlaygroundPage({ arg }) {
  const agents = useLoad(() => listAll('/v1/agents'), []);
  const [agentId, setAgentId] = useState(arg || '');
  const [thread, setThread] = useState(newThread());
  const [steps, setSteps] = useState(null);
  const [toolName, setToolName] = useState('');
  const [values, setValues] = useState({});
  const [progress, setProgress] = useState(null);
  const [out, setOut] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef(null);
  useEffect(() => { if (!agentId && agents.data?.length) setAgentId(agents.data[0].id); }, [agents.data]);
  useEffect(() => () => abort.current?.abort(), []);

  async function loadSteps(e) {
    e?.preventDefault();
    setError(null); setSteps(null);
    try {
      const s = await api('POST', `/v1/agents/${enc(agentId)}/threads/${enc(thread)}/steps`, {});
      setSteps(s);
      if (!s.tools.some((t) => t.name === toolName)) { setToolName(s.tools[0]?.name || ''); setValues({}); }
    } catch (err) { setError(err); }
  }
  const tool = steps?.tools.find((t) => t.name === toolName);

  async function run(e, extra) {
    e?.preventDefault();
    setError(null); setOut(null); setProgress(null); setBusy(true);
    abort.current = new AbortController();
    try {
      const args = { ...argsFrom(tool.input_schema, values), ...(extra || {}) };
      const last = await streamToolCall(agentId, thread, { name: tool.name, arguments: args }, (c) => {
        if (c.type === 'data-tool-loop-progress') setProgress(c.data);
      }, abort.current.signal);
      if (last.type === 'tool-output-error') setError(new Error(last.errorText));
      else setOut(last.output);
    } catch (err) { setError(err); } finally { setBusy(false); }
  }
  const verdict = verdictOf(out);
  const rows = out && Array.isArray(out.items) ? out.items : Array.isArray(out) ? out : null;
  return html`<h1 tabindex="-1">Playground</h1>
    <p>Run an agent's tools as its model would, through the runtime API (needs a key with the <code>runtime</code> scope).</p>
    <form class="panel" onSubmit=${loadSteps} aria-labelledby="pg-h">
      <h2 id="pg-h">Agent and thread</h2>
      <div class="row">
        <${Select} label="Agent" id="pg-agent" value=${agentId} onChange=${(v) => { setAgentId(v); setSteps(null); }}
          options=${[['', 'Choose an agent'], ...(agents.data || []).map((a) => [a.id, a.name])]} />
        <${Field} label="Thread id" id="pg-thread" value=${thread} onInput=${setThread} />
      </div>
      <button type="submit" disabled=${!agentId}>Load the next step</button>
      <button type="button" class="secondary" onClick=${() => { setThread(newThread()); setSteps(null); }}>New thread</button>
    </form>
    <${ErrorBox} error=${agents.error} />
    ${steps ? html`<section class="panel" aria-labelledby="steps-h">
      <h2 id="steps-h">Step ${steps.step}${steps.restricted ? ' (restricted to the retrieval tools until the cut result is read)' : ''}</h2>
      <details><summary>System messages (${steps.system.length})</summary>${steps.system.map((s) => html`<pre>${s}</pre>`)}</details>
      <form onSubmit=${run}>
        <${Select} label="Tool" id="pg-tool" value=${toolName} onChange=${(v) => { setToolName(v); setValues({}); }}
          options=${steps.tools.map((t) => [t.name, t.name])} />
        ${tool ? html`<p class="muted">${tool.description.slice(0, 400)}</p>
          <${ArgsForm} schema=${tool.input_schema} values=${values} setValues=${setValues} />
          <button type="submit" disabled=${busy}>Run ${tool.name}</button>` : null}
      </form>
    </section>` : null}
    <${Progress} p=${progress} end=${out === null ? null : verdictOf(out) || (progress ? { complete: true } : null)} />
    <${ErrorBox} error=${error} />
    ${out !== null ? html`<section class="panel" aria-labelledby="result-h">
      <h2 id="result-h">Result</h2>
      <p>Verdict: <${VerdictBadge} verdict=${verdict} /></p>
      ${verdict?.note ? html`<p class="muted">${verdict.note}</p>` : null}
      ${out._cache ? html`<p>Cache: <code>${JSON.stringify(out._cache)}</code></p>` : null}
      ${out._continue ? html`<p><button type="button" onClick=${() => run(null, { _continue: out._continue })} disabled=${busy}>Continue the walk from where it stopped</button></p>` : null}
      ${rows ? html`<${RowsTable} rows=${rows} caption="Rows of the result" />` : html`<pre>${JSON.stringify(out, null, 2)}</pre>`}
      <details><summary>The whole result as JSON</summary><pre>${JSON.stringify(out, null, 2)}</pre></details>
    </section>` : null}
    ${out?._resultId ? html`<${QueryStored} key=${out._resultId} agentId=${agentId} threadId=${thread} resultId=${out._resultId} />` : null}`;
}
