// Tools: a card per tool with its parameters and how it pages (style, parameters, how
// sure detection is, the author's hint, what its walks learned: P14), a form to edit the
// pagination hint (`x-loopgate-pagination` in the input schema, saved with
// PATCH /v1/tools/{id}), and on the Tools page the agents that bind the tool, each with
// the looping switch (the same accessible name and the same binding as on the agent's
// page).
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Notice, Select, html, useLoad } from './ui.js';

const HINT = 'x-loopgate-pagination';

/** The looping switch's accessible name, on the agent's page and on the tool card. */
export const LOOP_SWITCH = 'Allow response looping for this tool';

/** The tool's parameters as rows: top level (path/query/header), then body fields. */
export function paramsOf(schema) {
  const rows = [];
  const req = new Set(schema?.required || []);
  for (const [n, p] of Object.entries(schema?.properties || {})) {
    if (n === 'body' && p && p.properties) {
      const breq = new Set(p.required || []);
      for (const [bn, bp] of Object.entries(p.properties)) rows.push({ name: `body.${bn}`, type: bp.type || 'any', required: breq.has(bn), description: bp.description || '' });
    } else {
      rows.push({ name: n, type: p?.type || 'any', required: req.has(n), description: p?.description || '' });
    }
  }
  return rows;
}

function Paging({ tool }) {
  const pg = useLoad(() => api('GET', `/v1/tools/${enc(tool.id)}/pagination`), [tool.id, tool.updated_at]);
  if (pg.error) return html`<${ErrorBox} error=${pg.error} />`;
  if (!pg.data) return html`<p class="muted">Reading how it pages…</p>`;
  const p = pg.data;
  const used = Object.entries(p.parameters).filter(([, v]) => v);
  return html`<dl>
    <dt>How it pages</dt><dd>${p.style === 'none' ? 'not paginated (no page, offset or cursor parameter)' : `${p.style} style`}</dd>
    ${used.length ? html`<dt>Paging parameters</dt><dd>${used.map(([k, v]) => html`<code>${v}</code> (${k}) `)}</dd>` : null}
    <dt>Detection</dt><dd>${p.source === 'hint' ? 'from your hint' : 'detected from the schema'}, confidence <strong>${p.confidence}</strong></dd>
    <dt>Note</dt><dd>${p.note}</dd>
    ${p.learned ? html`<dt>Learned by its walks</dt><dd>${(p.learned.evidence || []).map((e) => html`<div>${e}</div>`)}
      ${p.learned_confirmed_at ? html`<div class="muted">last confirmed ${new Date(p.learned_confirmed_at).toLocaleString()}</div>` : null}</dd>` : null}
  </dl>`;
}

function EditHint({ tool, onSaved }) {
  const cur = tool.input_schema?.[HINT] || null;
  const initial = !cur ? 'auto' : cur.disabled ? 'disabled' : cur.cursor ? 'cursor' : cur.offset ? 'offset' : 'page';
  const [style, setStyle] = useState(initial);
  const [size, setSize] = useState(cur?.size || '');
  const [pos, setPos] = useState(cur?.page || cur?.offset || cur?.cursor || '');
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const names = paramsOf(tool.input_schema).map((r) => r.name);
  async function save(e) {
    e.preventDefault();
    setError(null); setSaved(null);
    const schema = { ...tool.input_schema };
    if (style === 'auto') delete schema[HINT];
    else if (style === 'disabled') schema[HINT] = { disabled: true };
    else schema[HINT] = { ...(size ? { size } : {}), [style]: pos };
    try {
      const t = await api('PATCH', `/v1/tools/${enc(tool.id)}`, { input_schema: schema });
      setSaved('Pagination hint saved.');
      onSaved(t);
    } catch (err) { setError(err); }
  }
  const id = `hint-${tool.id}`;
  const opts = [['', '(none)'], ...names.map((n) => [n, n])];
  return html`<form onSubmit=${save} aria-labelledby=${`${id}-h`}>
    <h4 id=${`${id}-h`} class="visually-hidden">Pagination hint for ${tool.name}</h4>
    <div class="row">
      <${Select} label="Pagination hint" id=${`${id}-style`} value=${style} onChange=${setStyle}
        options=${[['auto', 'Detect automatically'], ['page', 'Page number'], ['offset', 'Offset'], ['cursor', 'Cursor'], ['disabled', 'Never walk pages']]} />
      ${style === 'page' || style === 'offset' || style === 'cursor' ? html`
        <${Select} label="Page size parameter" id=${`${id}-size`} value=${size} onChange=${setSize} options=${opts} />
        <${Select} label=${`${style[0].toUpperCase()}${style.slice(1)} parameter`} id=${`${id}-pos`} value=${pos} onChange=${setPos} options=${opts} />` : null}
    </div>
    <button type="submit" class="secondary">Save hint</button>
    <${ErrorBox} error=${error} /><${Notice}>${saved}<//>
  </form>`;
}

/** One agent's binding of the tool: the looping switch, saved at once. */
function AgentLoopSwitch({ agent, tool, binding: initial }) {
  const [binding, setBinding] = useState(initial);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const id = `tb-${tool.id}-${agent.id}`;
  async function flip(on) {
    // the switch shows the click at once (a re-render meanwhile must not undo it), and
    // what the API saved once it answers
    const was = binding;
    setError(null); setSaved(null); setBinding({ ...binding, loop_responses: on });
    try {
      const b = await api('PATCH', `/v1/agents/${enc(agent.id)}/tools/${enc(tool.id)}`, { loop_responses: on });
      setBinding(b);
      setSaved(`Looping ${b.loop_responses ? 'allowed' : 'off'} for ${tool.name} in ${agent.name}.`);
    } catch (err) { setBinding(was); setError(err); }
  }
  return html`<li aria-label=${agent.name}>
    <a href=${`#/agents/${enc(agent.id)}`} id=${`${id}-agent`}>${agent.name}</a>
    <div class="switch">
      <input type="checkbox" role="switch" id=${`${id}-loop`} checked=${binding.loop_responses === true}
        aria-describedby=${`${id}-agent`} onChange=${(e) => flip(e.currentTarget.checked)} />
      <label for=${`${id}-loop`}>${LOOP_SWITCH}</label>
    </div>
    <${ErrorBox} error=${error} /><${Notice}>${saved}<//>
  </li>`;
}

/** The agents binding the tool (from the agents list, which carries their bindings). */
function BoundAgents({ tool, agents }) {
  const holding = agents
    .map((a) => [a, (a.agentTools || []).find((b) => b.tool_id === tool.id)])
    .filter(([, b]) => b);
  const h = `tool-${tool.id}-agents`;
  return html`<section aria-labelledby=${h}>
    <h4 id=${h}>Agents binding ${tool.name}</h4>
    ${holding.length
      ? html`<ul aria-labelledby=${h}>${holding.map(([a, b]) => html`<${AgentLoopSwitch} key=${a.id} agent=${a} tool=${tool} binding=${b} />`)}</ul>`
      : html`<p class="muted">No agent binds this tool yet: bind it on an agent's page.</p>`}
  </section>`;
}

export function ToolCard({ tool, agents, children }) {
  const [t, setT] = useState(tool);
  const rows = paramsOf(t.input_schema);
  return html`<article class="card" aria-labelledby=${`tool-${t.id}`}>
    <h3 id=${`tool-${t.id}`}>${t.name}</h3>
    <p><code>${t.method} ${t.path}</code> · ${t.kind}${t.toolkit ? ` · ${t.toolkit}` : ''}</p>
    <p class="muted">${t.description}</p>
    ${children}
    ${agents ? html`<${BoundAgents} tool=${t} agents=${agents} />` : null}
    <details><summary>Parameters (${rows.length})</summary>
      <table><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Required</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr><td><code>${r.name}</code></td><td>${r.type}</td><td>${r.required ? 'yes' : 'no'}</td></tr>`)}</tbody></table>
    </details>
    <${Paging} tool=${t} />
    <${EditHint} tool=${t} onSaved=${setT} />
  </article>`;
}

export function ToolsPage({ arg }) {
  const providers = useLoad(() => listAll('/v1/providers'), []);
  const tools = useLoad(() => listAll(`/v1/tools${arg ? `?provider_id=${enc(arg)}` : ''}`), [arg]);
  const agents = useLoad(() => listAll('/v1/agents'), []);
  const pick = (v) => { location.hash = v ? `#/tools/${enc(v)}` : '#/tools'; };
  return html`<h1 tabindex="-1">Tools</h1>
    <div class="row"><${Select} label="Provider" id="tools-provider" value=${arg || ''} onChange=${pick}
      options=${[['', 'All providers'], ...(providers.data || []).map((p) => [p.id, p.name])]} /></div>
    <${ErrorBox} error=${tools.error || providers.error || agents.error} />
    ${tools.data && tools.data.length === 0 ? html`<p class="muted">No tools yet: import an OpenAPI document on the Providers page.</p>` : null}
    <div class="cards">${(tools.data || []).map((t) => html`<${ToolCard} key=${t.id} tool=${t} agents=${agents.data || []} />`)}</div>`;
}
