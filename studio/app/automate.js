// Automation: a workflow's schedules (cron, time zone, the next three due times, pause and
// resume) and the webhook endpoints finished runs are delivered to, with each endpoint's
// delivery attempts. The signing secret is shown once, when it is made or rotated.
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Field, Notice, html, parseJson, useLoad } from './ui.js';

const EVENTS = ['workflow_run.succeeded', 'workflow_run.partial', 'workflow_run.failed'];
const badge = (s) => (s === 'succeeded' ? 'complete' : s === 'failed' ? 'failed' : 'neutral');

/** The schedules of one workflow, on its page. */
export function SchedulesPanel({ workflow }) {
  const SHOWN = 200;
  const list = useLoad(() => listAll(`/v1/workflows/${enc(workflow.id)}/schedules`, SHOWN + 1), [workflow.id]);
  const [cron, setCron] = useState('0 6 * * *');
  const [zone, setZone] = useState('UTC');
  const [input, setInput] = useState('');
  const [error, setError] = useState(null);
  const [msg, setMsg] = useState(null);
  async function act(fn, done) {
    setError(null); setMsg(null);
    try { await fn(); setMsg(done); list.reload(); } catch (err) { setError(err); }
  }
  const create = (e) => {
    e.preventDefault();
    act(() => api('POST', `/v1/workflows/${enc(workflow.id)}/schedules`,
      { cron, timezone: zone, input: parseJson(input, 'input') ?? {} }), `Schedule ${cron} (${zone}) created.`);
  };
  return html`<section class="panel" aria-labelledby="sch-h">
    <h2 id="sch-h">Schedules of ${workflow.name}</h2>
    <form onSubmit=${create}>
      <div class="row">
        <${Field} label="Cron expression" id="sch-cron" value=${cron} onInput=${setCron} required
          hint="5 fields: minute hour day-of-month month day-of-week" />
        <${Field} label="Time zone" id="sch-zone" value=${zone} onInput=${setZone} required hint="an IANA name, e.g. Europe/Paris" />
      </div>
      <label for="sch-input">Run input (JSON)</label>
      <textarea id="sch-input" value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea>
      <button type="submit">Create schedule</button>
    </form>
    <${ErrorBox} error=${error || list.error} /><${Notice}>${msg}<//>
    ${(list.data || []).length > SHOWN ? html`<p class="muted">The first ${SHOWN} schedules are shown; more exist.</p>` : null}
    ${(list.data || []).slice(0, SHOWN).map((s) => html`<article class="card" aria-label=${`Schedule ${s.id}`}>
      <h3><code>${s.cron}</code> · ${s.timezone} · <span class=${`badge ${s.paused ? 'neutral' : 'complete'}`}>${s.paused ? 'paused' : 'active'}</span></h3>
      <p class="muted">overlap ${s.overlap} · catch-up ${s.catch_up}${s.last_run ? ` · last run ${s.last_run.id}: ${s.last_run.status} (due ${s.last_run.scheduled_for})` : ' · no run yet'}</p>
      ${s.paused ? html`<p>Paused: no run is due.</p>` : html`<p>Next runs:</p>
        <ol aria-label=${`Next runs of ${s.id}`}>${(s.next_runs || []).map((t) => html`<li><time datetime=${t}>${t}</time></li>`)}</ol>`}
      <button type="button" class="secondary" onClick=${() => act(() => api('PATCH', `/v1/schedules/${enc(s.id)}`, { paused: !s.paused }),
        `Schedule ${s.cron} ${s.paused ? 'resumed' : 'paused'}.`)}>${s.paused ? 'Resume' : 'Pause'} schedule ${s.cron}</button>
      <button type="button" class="danger" onClick=${() => act(() => api('DELETE', `/v1/schedules/${enc(s.id)}`),
        `Schedule ${s.cron} deleted.`)}>Delete schedule ${s.cron}</button>
    </article>`)}
  </section>`;
}

function Deliveries({ endpoint }) {
  const list = useLoad(() => listAll(`/v1/webhook-endpoints/${enc(endpoint.id)}/deliveries`, 100), [endpoint.id]);
  const rows = list.data || [];
  return html`<section class="panel" aria-labelledby="dlv-h">
    <h2 id="dlv-h">Deliveries to ${endpoint.url}</h2>
    <button type="button" class="secondary" onClick=${list.reload}>Refresh deliveries</button>
    <${ErrorBox} error=${list.error} />
    ${rows.length ? html`<table aria-label="Deliveries"><thead><tr><th scope="col">Event</th><th scope="col">Run</th>
      <th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Next attempt</th><th scope="col">Queued</th></tr></thead>
      <tbody>${rows.map((d) => html`<tr><td>${d.event_type}</td><td><code>${d.run_id}</code></td>
        <td><span class=${`badge ${badge(d.status)}`}>${d.status}</span></td><td>${d.attempts}</td>
        <td>${d.last_status_code ?? '—'}</td><td>${d.next_attempt_at || '—'}</td><td>${d.created_at}</td></tr>`)}</tbody></table>`
      : html`<p class="muted">${list.loading ? 'Loading…' : 'No deliveries yet: one is queued when a run finishes.'}</p>`}
  </section>`;
}

/** Webhook endpoints: create, rotate the secret, delete, read the deliveries. */
export function WebhooksPage({ arg }) {
  // an org holds at most 50 endpoints (the API's bound): one read lists them all
  const list = useLoad(() => listAll('/v1/webhook-endpoints', 100), []);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState(EVENTS);
  const [error, setError] = useState(null);
  const [secret, setSecret] = useState(null);
  const [msg, setMsg] = useState(null);
  // the endpoint named in the address, read by its id (it may be past the first page)
  const picked = useLoad(() => (arg ? api('GET', `/v1/webhook-endpoints/${enc(arg)}`) : Promise.resolve(null)), [arg]);
  const current = picked.data;
  async function act(fn, done) {
    setError(null); setMsg(null); setSecret(null);
    try {
      const r = await fn();
      if (r?.secret) setSecret(r.secret);
      setMsg(done);
      list.reload();
    } catch (err) { setError(err); }
  }
  const toggle = (ev) => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev]);
  const create = (e) => {
    e.preventDefault();
    act(() => api('POST', '/v1/webhook-endpoints', { url, events }), `Endpoint ${url} created.`);
  };
  return html`<h1 tabindex="-1">Webhooks</h1>
    <p>Where finished workflow runs are delivered, signed per Standard Webhooks.</p>
    <form class="panel" onSubmit=${create} aria-labelledby="whe-h">
      <h2 id="whe-h">New endpoint</h2>
      <${Field} label="Endpoint URL" id="whe-url" type="url" value=${url} onInput=${setUrl} required />
      <fieldset><legend>Events</legend>${EVENTS.map((ev) => html`<label class="inline">
        <input type="checkbox" checked=${events.includes(ev)} onChange=${() => toggle(ev)} /> ${ev}</label>`)}</fieldset>
      <button type="submit">Create endpoint</button>
    </form>
    <${ErrorBox} error=${error || list.error || picked.error} /><${Notice}>${msg}<//>
    ${secret ? html`<div class="notice" role="status" aria-label="Signing secret">Signing secret, shown once — keep it now:
      <code id="whe-secret">${secret}</code></div>` : null}
    <ul aria-label="Endpoints">${(list.data || []).map((w) => html`<li>
      <a href=${`#/webhooks/${enc(w.id)}`} aria-current=${w.id === arg ? 'true' : undefined}>${w.url}</a> — ${w.events.join(', ')}
      <button type="button" class="secondary" onClick=${() => act(() => api('POST', `/v1/webhook-endpoints/${enc(w.id)}/rotate-secret`),
        `Secret of ${w.url} rotated.`)}>Rotate secret of ${w.url}</button>
      <button type="button" class="danger" onClick=${() => act(() => api('DELETE', `/v1/webhook-endpoints/${enc(w.id)}`),
        `Endpoint ${w.url} deleted.`)}>Delete ${w.url}</button></li>`)}</ul>
    ${current ? html`<${Deliveries} key=${current.id} endpoint=${current} />` : null}`;
}
