// Agents: create one, then per binding the looping switch (accessible name exactly
// "Allow response looping for this tool"; the tool card on the Tools page has the same
// switch for each agent binding the tool), dataset_ttl_hours and discovery, and a
// placement preview (D2) of which tools are offered directly and which are pooled
// behind search_tools, read from the API again after every change.
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Field, Notice, Select, html, useLoad } from './ui.js';
import { LOOP_SWITCH, ToolCard } from './tools.js';

export { LOOP_SWITCH };

function CreateAgent({ onCreated }) {
  const [name, setName] = useState('');
  const [dep, setDep] = useState('');
  const [instructions, setInstructions] = useState('');
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setError(null);
    try {
      const a = await api('POST', '/v1/agents', { name, deployment_id: dep.trim(), instructions, agentTools: [] });
      onCreated(a);
    } catch (err) { setError(err); }
  }
  return html`<form class="panel" onSubmit=${submit} aria-labelledby="create-agent">
    <h2 id="create-agent">Create an agent</h2>
    <div class="row">
      <${Field} label="Agent name" id="agent-name" value=${name} onInput=${setName} required />
      <${Field} label="Deployment id" id="agent-deployment" value=${dep} onInput=${setDep} required hint="dep_… — given by your admin." />
    </div>
    <label for="agent-instructions">Instructions</label>
    <textarea id="agent-instructions" value=${instructions} onInput=${(e) => setInstructions(e.currentTarget.value)}></textarea>
    <button type="submit">Create agent</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

function Placement({ agent, version }) {
  const pl = useLoad(() => api('GET', `/v1/agents/${enc(agent.id)}/placement`), [agent.id, version]);
  return html`<section class="panel" aria-labelledby="placement-h" aria-live="polite">
    <h2 id="placement-h">Placement preview</h2>
    <${ErrorBox} error=${pl.error} />
    ${pl.data ? html`<p>${pl.data.direct.length} offered directly, budget ${pl.data.budget}; ${pl.data.pooled.length} pooled behind <code>search_tools</code>.</p>
    <div class="placement">
      <div><h3>Offered directly</h3><ul aria-label="Offered directly">${pl.data.direct.map((t) => html`<li>${t.name}${t.toolkit ? html` <span class="muted">(${t.toolkit})</span>` : null} — ${t.reason}</li>`)}</ul></div>
      <div><h3>Pooled</h3>${pl.data.pooled.length ? html`<ul aria-label="Pooled">${pl.data.pooled.map((t) => html`<li>${t.name}${t.toolkit ? html` <span class="muted">(${t.toolkit})</span>` : null} — ${t.reason}</li>`)}</ul>` : html`<p class="muted">Nothing pooled: search_tools is not offered.</p>`}</div>
    </div>` : null}
  </section>`;
}

function BindingControls({ agent, binding: initial, onChanged }) {
  // the binding as the API last answered it: the switch shows what was saved
  const [binding, setBinding] = useState(initial);
  const [error, setError] = useState(null);
  const [ttl, setTtl] = useState(binding.dataset_ttl_hours ?? '');
  const base = `/v1/agents/${enc(agent.id)}/tools/${enc(binding.tool_id)}`;
  const id = `b-${binding.tool_id}`;
  async function patch(body) {
    setError(null);
    try {
      const b = await api('PATCH', base, body);
      setBinding(b);
      onChanged(b);
    } catch (err) { setError(err); }
  }
  async function remove() {
    setError(null);
    try { await api('DELETE', base); onChanged(null); } catch (err) { setError(err); }
  }
  const disc = binding.discovery === true ? 'pooled' : binding.discovery === false ? 'direct' : 'budget';
  return html`<div>
    <div class="switch">
      <input type="checkbox" role="switch" id=${`${id}-loop`} checked=${binding.loop_responses === true}
        aria-describedby=${`tool-${binding.tool_id}`}
        onChange=${(e) => patch({ loop_responses: e.currentTarget.checked })} />
      <label for=${`${id}-loop`}>${LOOP_SWITCH}</label>
    </div>
    <form class="row" onSubmit=${(e) => { e.preventDefault(); patch({ dataset_ttl_hours: ttl === '' ? null : Number(ttl) }); }}>
      <${Field} label="dataset_ttl_hours" id=${`${id}-ttl`} type="number" min="0" value=${ttl} onInput=${setTtl}
        hint="How long a cached complete walk stays fresh; empty: the deployment's default." />
      <div><button type="submit" class="secondary">Save TTL</button></div>
    </form>
    <${Select} label="discovery" id=${`${id}-disc`} value=${disc}
      onChange=${(v) => patch({ discovery: v === 'pooled' ? true : v === 'direct' ? false : null })}
      options=${[['budget', 'By budget (default)'], ['direct', 'Always offered directly'], ['pooled', 'Always behind tool search']]} />
    <button type="button" class="danger" onClick=${remove}>Remove from agent</button>
    <${ErrorBox} error=${error} />
  </div>`;
}

function Deployment({ agent }) {
  // Deployments are an admin resource: a studio key may not read them, and the API says so.
  const dep = useLoad(() => api('GET', `/v1/orgs/${enc(agent.org_id)}/deployments/${enc(agent.deployment_id)}`), [agent.deployment_id]);
  return html`<p>Deployment <code>${agent.deployment_id}</code>:
    ${dep.data ? html` cache <strong>${dep.data.cache}</strong>` : dep.error ? html` <span class="muted">cache mode not visible to this key (${dep.error.message})</span>` : ' …'}</p>`;
}

function AgentDetail({ id }) {
  const agent = useLoad(() => api('GET', `/v1/agents/${enc(id)}`), [id]);
  const tools = useLoad(() => listAll('/v1/tools'), []);
  const [version, setVersion] = useState(0);
  const [pick, setPick] = useState('');
  const [error, setError] = useState(null);
  const [msg, setMsg] = useState(null);
  if (agent.error) return html`<h1 tabindex="-1">Agent</h1><${ErrorBox} error=${agent.error} />`;
  if (!agent.data) return html`<h1 tabindex="-1">Agent</h1><p>Loading…</p>`;
  const a = agent.data;
  const byId = new Map((tools.data || []).map((t) => [t.id, t]));
  const bound = new Set(a.agentTools.map((b) => b.tool_id));
  const unbound = (tools.data || []).filter((t) => !bound.has(t.id));
  const changed = (what) => { setMsg(what); setVersion((v) => v + 1); agent.reload(); };
  async function bind(e) {
    e.preventDefault();
    setError(null);
    const t = byId.get(pick);
    if (!t) return;
    try {
      await api('POST', `/v1/agents/${enc(a.id)}/tools`, { tool_id: t.id, provider_id: t.provider_id });
      setPick('');
      changed(`${t.name} bound to ${a.name}.`);
    } catch (err) { setError(err); }
  }
  async function bindAll() {
    setError(null);
    try {
      for (const t of unbound) await api('POST', `/v1/agents/${enc(a.id)}/tools`, { tool_id: t.id, provider_id: t.provider_id });
      changed(`${unbound.length} tools bound to ${a.name}.`);
    } catch (err) { setError(err); agent.reload(); }
  }
  return html`<h1 tabindex="-1">Agent ${a.name}</h1>
    <p><a href="#/agents">All agents</a> · <code>${a.id}</code> · <a href=${`#/playground/${enc(a.id)}`}>Open in the playground</a></p>
    <${Deployment} agent=${a} />
    <form class="panel" onSubmit=${bind} aria-labelledby="bind-h">
      <h2 id="bind-h">Bind tools</h2>
      <div class="row"><${Select} label="Tool to bind" id="bind-tool" value=${pick} onChange=${setPick}
        options=${[['', unbound.length ? 'Choose a tool' : 'Every tool is bound'], ...unbound.map((t) => [t.id, `${t.name} (${t.method} ${t.path})`])]} /></div>
      <button type="submit" disabled=${!pick}>Bind tool</button>
      <button type="button" class="secondary" disabled=${!unbound.length} onClick=${bindAll}>Bind all ${unbound.length} unbound tools</button>
      <${ErrorBox} error=${error} /><${Notice}>${msg}<//>
    </form>
    <${Placement} agent=${a} version=${version} />
    <h2>Tools of this agent (${a.agentTools.length})</h2>
    ${a.agentTools.length === 0 ? html`<p class="muted">No tools bound yet.</p>` : null}
    <div class="cards">${a.agentTools.map((b) => {
      const t = byId.get(b.tool_id);
      const controls = html`<${BindingControls} key=${b.tool_id} agent=${a} binding=${b}
        onChanged=${(nb) => changed(nb ? `Binding of ${t?.name || b.tool_id} saved.` : `${t?.name || b.tool_id} removed.`)} />`;
      return t ? html`<${ToolCard} key=${b.tool_id} tool=${t}>${controls}<//>`
        : html`<article class="card"><h3 id=${`tool-${b.tool_id}`}>${b.tool_id}</h3>${controls}</article>`;
    })}</div>`;
}

export function AgentsPage({ arg }) {
  const agents = useLoad(() => listAll('/v1/agents'), []);
  if (arg) return html`<${AgentDetail} id=${arg} />`;
  return html`<h1 tabindex="-1">Agents</h1>
    <${CreateAgent} onCreated=${(a) => { location.hash = `#/agents/${enc(a.id)}`; }} />
    <${ErrorBox} error=${agents.error} />
    <h2>Your agents</h2>
    ${agents.data && agents.data.length === 0 ? html`<p class="muted">No agents yet.</p>` : null}
    <ul>${(agents.data || []).map((a) => html`<li><a href=${`#/agents/${enc(a.id)}`}>${a.name}</a> — ${a.agentTools.length} tools, ${a.agentTools.filter((b) => b.loop_responses).length} looping</li>`)}</ul>`;
}
