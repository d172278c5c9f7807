// Workflows: a definition editor whose validation errors are shown at the step they name
// (`steps[i]…` or `step '<id>'`), runs with each step's `_loop` verdict, and the
// workflow's schedules.
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { SchedulesPanel } from './automate.js';
import { ErrorBox, Field, Notice, Select, VerdictBadge, html, parseJson, useLoad, verdictOf } from './ui.js';

const EXAMPLE = JSON.stringify([{ id: 'fetch', type: 'tool', tool: 'listItems', input: {}, loop: { all_pages: true } }], null, 2);

/** The index of the step an API error names, or -1. */
export function stepOf(detail, steps) {
  const m = /steps\[(\d+)\]/.exec(detail || '');
  if (m) return Number(m[1]);
  const s = /step '([^']+)'/.exec(detail || '');
  if (s && Array.isArray(steps)) return steps.findIndex((x) => x && x.id === s[1]);
  return -1;
}

function Editor({ workflow, agents, onSaved }) {
  const [name, setName] = useState(workflow?.name || '');
  const [agentId, setAgentId] = useState(workflow?.agent_id || agents[0]?.id || '');
  const [text, setText] = useState(workflow ? JSON.stringify(workflow.steps, null, 2) : EXAMPLE);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  let steps = null;
  try { steps = JSON.parse(text); } catch (_) { steps = null; }
  const at = error ? stepOf(error.message, steps) : -1;
  async function save(e) {
    e.preventDefault();
    setError(null); setSaved(null);
    try {
      const body = { name, agent_id: agentId, steps: parseJson(text, 'steps') ?? [] };
      const w = workflow
        ? await api('PATCH', `/v1/workflows/${enc(workflow.id)}`, body)
        : await api('POST', '/v1/workflows', body);
      setSaved(`Workflow ${w.name} saved.`);
      onSaved(w);
    } catch (err) { setError(err); }
  }
  return html`<form class="panel" onSubmit=${save} aria-labelledby="wf-edit-h">
    <h2 id="wf-edit-h">${workflow ? `Edit ${workflow.name}` : 'New workflow'}</h2>
    <div class="row">
      <${Field} label="Workflow name" id="wf-name" value=${name} onInput=${setName} required />
      <${Select} label="Agent" id="wf-agent" value=${agentId} onChange=${setAgentId} options=${agents.map((a) => [a.id, a.name])} />
    </div>
    <label for="wf-steps">Steps (JSON: [{id, type: "tool", tool, input, loop?, if?}])</label>
    <textarea id="wf-steps" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    ${Array.isArray(steps) ? html`<ol aria-label="Steps">${steps.map((s, i) => html`<li class=${i === at ? 'step-error' : ''}>
      <code>${s?.id ?? '(no id)'}</code>: ${s?.tool ?? '(no tool)'}${s?.loop ? ` · loop ${Object.keys(s.loop).join(', ')}` : ''}
      ${i === at ? html`<div class="error" role="alert">${error.message}</div>` : null}
    </li>`)}</ol>` : html`<p class="error">The steps are not valid JSON yet.</p>`}
    <button type="submit">Save workflow</button>
    ${at < 0 ? html`<${ErrorBox} error=${error} />` : null}
    <${Notice}>${saved}<//>
  </form>`;
}

function Runs({ workflow }) {
  const runs = useLoad(() => listAll(`/v1/workflows/${enc(workflow.id)}/runs`, 50), [workflow.id]);
  const [input, setInput] = useState('');
  const [error, setError] = useState(null);
  async function start(e) {
    e.preventDefault();
    setError(null);
    try {
      await api('POST', `/v1/workflows/${enc(workflow.id)}/runs`, { input: parseJson(input, 'input') ?? {} });
      runs.reload();
    } catch (err) { setError(err); }
  }
  return html`<section class="panel" aria-labelledby="runs-h">
    <h2 id="runs-h">Runs of ${workflow.name}</h2>
    <form onSubmit=${start}>
      <label for="run-input">Run input (JSON)</label>
      <textarea id="run-input" value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea>
      <button type="submit">Start a run</button>
      <button type="button" class="secondary" onClick=${runs.reload}>Refresh runs</button>
    </form>
    <${ErrorBox} error=${error || runs.error} />
    ${(runs.data || []).map((r) => html`<article class="card" aria-label=${`Run ${r.id}`}>
      <h3>${r.id} · <span class=${`badge ${r.status === 'succeeded' ? 'complete' : r.status === 'failed' ? 'failed' : 'neutral'}`}>${r.status}</span></h3>
      <p class="muted">${r.started_at}${r.trigger ? ` · ${r.trigger}` : ''}</p>
      <table><thead><tr><th scope="col">Step</th><th scope="col">Verdict</th></tr></thead>
      <tbody>${Object.entries(r.steps || {}).map(([id, o]) => html`<tr><td><code>${id}</code></td><td>${
        o?._skipped ? `skipped: ${o.reason}` : o?._error ? html`<span class="badge failed">failed</span> ${o._error.detail}` : html`<${VerdictBadge} verdict=${verdictOf(o)} />`}</td></tr>`)}</tbody></table>
    </article>`)}
  </section>`;
}

export function WorkflowsPage({ arg }) {
  const agents = useLoad(() => listAll('/v1/agents'), []);
  const workflows = useLoad(() => listAll('/v1/workflows'), []);
  const current = (workflows.data || []).find((w) => w.id === arg) || null;
  return html`<h1 tabindex="-1">Workflows</h1>
    <${ErrorBox} error=${workflows.error || agents.error} />
    <ul>${(workflows.data || []).map((w) => html`<li><a href=${`#/workflows/${enc(w.id)}`} aria-current=${w.id === arg ? 'true' : undefined}>${w.name}</a> — ${w.steps.length} steps</li>`)}</ul>
    ${arg ? html`<p><a href="#/workflows">New workflow</a></p>` : null}
    ${agents.data ? html`<${Editor} key=${current ? current.id : `new-${arg || ''}`} workflow=${current} agents=${agents.data}
      onSaved=${(w) => { workflows.reload(); location.hash = `#/workflows/${enc(w.id)}`; }} />` : null}
    ${current ? html`<${Runs} workflow=${current} />` : null}
    ${current ? html`<${SchedulesPanel} key=${`s-${current.id}`} workflow=${current} />` : null}`;
}
