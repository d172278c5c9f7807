// Tools: a card per tool with its parameters and how it pages (style, parameters, how
// sure detection is, the author's hint, what its walks learned: P14), and a form to edit
// the pagination hint (`x-loopgate-pagination` in the input schema, saved with
// PATCH /v1/tools/{id}).
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Notice, Select, html, useLoad } from './ui.js';

const HINT = 'x-loopgate-pagination';

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

export function ToolCard({ tool, children }) {
  const [t, setT] = useState(tool);
  const rows = paramsOf(t.input_schema);
  return html`<article class="card" aria-labelledby=${`tool-${t.id}`}>
    <h3 id=${`tool-${t.id}`}>${t.name}</h3>
    <p><code>${t.method} ${t.path}</code> · ${t.kind}${t.toolkit ? ` · ${t.toolkit}` : ''}</p>
    <p class="muted">${t.description}</p>
    ${children}
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
  const pick = (v) => { location.hash = v ? `#/tools/${enc(v)}` : '#/tools'; };
  return html`<h1 tabindex="-1">Tools</h1>
    <div class="row"><${Select} label="Provider" id="tools-provider" value=${arg || ''} onChange=${pick}
      options=${[['', 'All providers'], ...(providers.data || []).map((p) => [p.id, p.name])]} /></div>
    <${ErrorBox} error=${tools.error || providers.error} />
    ${tools.data && tools.data.length === 0 ? html`<p class="muted">No tools yet: import an OpenAPI document on the Providers page.</p>` : null}
    <div class="cards">${(tools.data || []).map((t) => html`<${ToolCard} key=${t.id} tool=${t} />`)}</div>`;
}
