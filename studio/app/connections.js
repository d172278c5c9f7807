// Connections: an end user's connected-app connections (GET /v1/connections?user_id=,
// scope `mint`), never a secret, and removing one.
import { useState } from 'preact/hooks';
import { api, enc, listAll } from './api.js';
import { ErrorBox, Field, Notice, html } from './ui.js';

export function ConnectionsPage() {
  const [user, setUser] = useState('');
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  const [msg, setMsg] = useState(null);
  async function load(e) {
    e?.preventDefault();
    setError(null);
    try { setRows(await listAll(`/v1/connections?user_id=${enc(user)}`, 200)); } catch (err) { setError(err); setRows(null); }
  }
  async function remove(c) {
    setError(null);
    try { await api('DELETE', `/v1/connections/${enc(c.id)}`); setMsg(`${c.toolkit} disconnected for ${c.user_id}.`); await load(); } catch (err) { setError(err); }
  }
  return html`<h1 tabindex="-1">Connections</h1>
    <p>The connected apps an end user has connected (needs a key with the <code>mint</code> scope).</p>
    <form class="panel" onSubmit=${load} aria-labelledby="conn-h">
      <h2 id="conn-h">Find an end user's connections</h2>
      <${Field} label="End user id" id="conn-user" value=${user} onInput=${setUser} required />
      <button type="submit">Show connections</button>
    </form>
    <${ErrorBox} error=${error} /><${Notice}>${msg}<//>
    ${rows ? (rows.length ? html`<table aria-label="Connections"><thead><tr><th scope="col">Toolkit</th><th scope="col">Connected</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${rows.map((c) => html`<tr><td>${c.toolkit}</td><td>${c.connected_at}</td><td>${c.expires_at || '—'}</td><td>${c.broken ? 'broken: connect again' : 'working'}</td>
        <td><button type="button" class="danger" onClick=${() => remove(c)}>Disconnect ${c.toolkit}</button></td></tr>`)}</tbody></table>`
      : html`<p class="muted">No connections for ${user}.</p>`) : null}`;
}
