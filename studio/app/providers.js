// Providers: create one (API, MCP server or connected app), import an OpenAPI document
// into it (upload or paste) with what became of each operation, and sync an MCP server.
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Field, Notice, Select, html, useLoad } from './ui.js';

function CreateProvider({ onCreated }) {
  const [kind, setKind] = useState('api');
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [auth, setAuth] = useState('none');
  const [authName, setAuthName] = useState('');
  const [credential, setCredential] = useState('');
  const [toolkit, setToolkit] = useState('');
  const [conn, setConn] = useState('api_key');
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setError(null);
    const body = { kind, name, auth: { type: auth, ...(authName ? { name: authName } : {}) } };
    if (kind === 'mcp') body.url = url; else body.base_url = url;
    if (credential) body.credential = credential;
    if (kind === 'app') {
      body.toolkit = toolkit || name;
      body.connection = { type: conn };
    }
    try {
      const p = await api('POST', '/v1/providers', body);
      setName(''); setUrl(''); setCredential('');
      onCreated(p);
    } catch (err) { setError(err); }
  }
  return html`<form class="panel" onSubmit=${submit} aria-labelledby="create-provider">
    <h2 id="create-provider">Create a provider</h2>
    <div class="row">
      <${Select} label="Kind" id="provider-kind" value=${kind} onChange=${setKind}
        options=${[['api', 'HTTP API'], ['mcp', 'MCP server'], ['app', 'Connected app']]} />
      <${Field} label="Name" id="provider-name" value=${name} onInput=${setName} required />
      <${Field} label=${kind === 'mcp' ? 'MCP server URL' : 'Base URL'} id="provider-url" value=${url} onInput=${setUrl} type="url" required />
    </div>
    <div class="row">
      <${Select} label="Authentication" id="provider-auth" value=${auth} onChange=${setAuth}
        options=${[['none', 'None'], ['bearer', 'Bearer token'], ['header', 'Header'], ['query', 'Query parameter']]} />
      ${auth === 'header' || auth === 'query'
        ? html`<${Field} label="Header or parameter name" id="provider-auth-name" value=${authName} onInput=${setAuthName} />` : null}
      ${auth !== 'none'
        ? html`<${Field} label="Org credential" id="provider-credential" type="password" autocomplete="off" value=${credential} onInput=${setCredential}
            hint="Encrypted at rest and never shown again." />` : null}
    </div>
    ${kind === 'app' ? html`<div class="row">
      <${Field} label="Toolkit" id="provider-toolkit" value=${toolkit} onInput=${setToolkit} hint="Defaults to the provider's name." />
      <${Select} label="End users connect with" id="provider-connection" value=${conn} onChange=${setConn}
        options=${[['api_key', 'An API key they paste']]} />
    </div>` : null}
    <button type="submit">Create provider</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

function ImportOpenApi({ provider, onImported }) {
  const [text, setText] = useState('');
  const [error, setError] = useState(null);
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  async function pick(e) {
    const f = e.currentTarget.files?.[0];
    if (f) setText(await f.text());
  }
  async function submit(e) {
    e.preventDefault();
    setError(null); setResult(null); setBusy(true);
    const json = text.trim().startsWith('{');
    try {
      const r = await api('POST', `/v1/providers/${enc(provider.id)}/openapi`, text,
        { raw: true, contentType: json ? 'application/json' : 'application/yaml' });
      setResult(r.data);
      onImported();
    } catch (err) { setError(err); } finally { setBusy(false); }
  }
  const fid = `import-${provider.id}`;
  return html`<form onSubmit=${submit} aria-labelledby=${`${fid}-h`}>
    <h3 id=${`${fid}-h`}>Import an OpenAPI document into ${provider.name}</h3>
    <label for=${`${fid}-file`}>Upload a document (JSON or YAML)</label>
    <input id=${`${fid}-file`} type="file" accept=".json,.yaml,.yml,application/json,application/yaml" onChange=${pick} />
    <label for=${`${fid}-text`}>…or paste it</label>
    <textarea id=${`${fid}-text`} value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    <button type="submit" disabled=${busy || !text.trim()}>Import</button>
    <${ErrorBox} error=${error} />
    ${result ? html`<div role="status">
      <p class="notice">Imported ${result.length} operation${result.length === 1 ? '' : 's'}, one tool each.</p>
      <table aria-label="Imported operations"><thead><tr><th scope="col">Operation</th><th scope="col">Tool</th><th scope="col">Result</th></tr></thead>
      <tbody>${result.map((t) => html`<tr><td><code>${t.method} ${t.path}</code></td><td><a href=${`#/tools/${enc(t.provider_id)}`}>${t.name}</a></td><td>imported</td></tr>`)}</tbody></table>
    </div>` : null}
  </form>`;
}

function SyncMcp({ provider, onSynced }) {
  const [report, setReport] = useState(null);
  const [error, setError] = useState(null);
  async function sync() {
    setError(null); setReport(null);
    try {
      setReport(await api('POST', `/v1/providers/${enc(provider.id)}/sync`));
      onSynced();
    } catch (err) { setError(err); }
  }
  const list = (xs) => (xs.length ? xs.join(', ') : 'none');
  return html`<div>
    <button type="button" onClick=${sync}>Sync tools from ${provider.name}</button>
    <${ErrorBox} error=${error} />
    ${report ? html`<dl role="status" aria-label="Sync report">
      <dt>Added</dt><dd>${list(report.added)}</dd>
      <dt>Updated</dt><dd>${list(report.updated)}</dd>
      <dt>Removed</dt><dd>${list(report.removed)}</dd>
      <dt>Unchanged</dt><dd>${report.unchanged}</dd>
      <dt>Skipped</dt><dd>${report.skipped.length ? report.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ') : 'none'}</dd>
    </dl>` : null}
  </div>`;
}

export function ProvidersPage() {
  const providers = useLoad(() => listAll('/v1/providers'), []);
  const [open, setOpen] = useState(null);
  const [created, setCreated] = useState(null);
  return html`<h1 tabindex="-1">Providers</h1>
    <p>The APIs, MCP servers and connected apps your agents' tools call.</p>
    <${CreateProvider} onCreated=${(p) => { setCreated(p); setOpen(p.id); providers.reload(); }} />
    <${Notice}>${created ? `Provider ${created.name} created (${created.id}).` : null}<//>
    <${ErrorBox} error=${providers.error} />
    <h2>Your providers</h2>
    ${providers.data && providers.data.length === 0 ? html`<p class="muted">No providers yet.</p>` : null}
    ${(providers.data || []).map((p) => html`<section class="panel" aria-labelledby=${`prv-${p.id}`}>
      <h3 id=${`prv-${p.id}`}>${p.name} <span class="muted">(${p.kind}${p.toolkit ? `, toolkit ${p.toolkit}` : ''})</span></h3>
      <p><code>${p.base_url}</code> · auth ${p.auth.type}${p.has_credential ? ' · credential stored' : ''} · <a href=${`#/tools/${enc(p.id)}`}>tools</a></p>
      ${p.kind === 'mcp'
        ? html`<${SyncMcp} provider=${p} onSynced=${() => {}} />`
        : open === p.id
          ? html`<${ImportOpenApi} provider=${p} onImported=${() => {}} />`
          : html`<button type="button" class="secondary" onClick=${() => setOpen(p.id)}>Import an OpenAPI document</button>`}
    </section>`)}`;
}
