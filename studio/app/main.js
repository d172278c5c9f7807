// The Studio console: sign-in, navigation and the hash router. Every page is reachable
// by URL (#/providers, #/tools, #/agents/<id>, #/playground, #/workflows, #/webhooks, #/connections).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, signIn, signOut, signedIn } from './api.js';
import { ErrorBox, html } from './ui.js';
import { ProvidersPage } from './providers.js';
import { ToolsPage } from './tools.js';
import { AgentsPage } from './agents.js';
import { PlaygroundPage } from './playground.js';
import { WorkflowsPage } from './workflows.js';
import { ConnectionsPage } from './connections.js';
import { WebhooksPage } from './automate.js';

const PAGES = [
  ['providers', 'Providers', ProvidersPage],
  ['tools', 'Tools', ToolsPage],
  ['agents', 'Agents', AgentsPage],
  ['playground', 'Playground', PlaygroundPage],
  ['workflows', 'Workflows', WorkflowsPage],
  ['webhooks', 'Webhooks', WebhooksPage],
  ['connections', 'Connections', ConnectionsPage],
];

function route() {
  const parts = (location.hash.replace(/^#\/?/, '') || 'providers').split('/').map(decodeURIComponent);
  return { page: parts[0], arg: parts[1] || null };
}

function SignIn({ onDone }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => { document.title = 'Sign in — loopgate Studio'; }, []);
  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    signIn(key.trim());
    try {
      // any studio-scoped read checks the key
      await api('GET', '/v1/providers?limit=1');
      setKey('');
      onDone();
    } catch (err) {
      signOut();
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<main class="signin">
    <h1>Sign in to loopgate Studio</h1>
    <p>Paste an org API key with the <code>studio</code> scope. Add <code>runtime</code> to
      use the playground and run workflows, and <code>mint</code> to see end users' connections.
      The key stays in this tab only and is forgotten when you sign out or close it.</p>
    <form onSubmit=${submit}>
      <label for="org-key">Org API key</label>
      <input id="org-key" type="password" autocomplete="off" spellcheck="false" required
        value=${key} onInput=${(e) => setKey(e.currentTarget.value)} />
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${ErrorBox} error=${error} />
  </main>`;
}

function Shell({ onSignOut }) {
  const [r, setR] = useState(route());
  useEffect(() => {
    const on = () => setR(route());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const entry = PAGES.find(([p]) => p === r.page) || PAGES[0];
  const [, title, Page] = entry;
  useEffect(() => {
    document.title = `${title} — loopgate Studio`;
    document.querySelector('main h1')?.focus();
  }, [title, r.arg]);
  return html`
    <header class="top">
      <p class="brand">loopgate Studio</p>
      <nav aria-label="Studio">
        <ul>${PAGES.map(([p, t]) => html`<li><a href=${`#/${p}`} aria-current=${p === entry[0] ? 'page' : undefined}>${t}</a></li>`)}</ul>
      </nav>
      <span class="spacer"></span>
      <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>
    </header>
    <main id="main"><${Page} arg=${r.arg} /></main>`;
}

function App() {
  const [inside, setInside] = useState(signedIn());
  if (!inside) return html`<${SignIn} onDone=${() => setInside(true)} />`;
  return html`<${Shell} onSignOut=${() => { signOut(); location.hash = ''; setInside(false); }} />`;
}

render(html`<${App} />`, document.getElementById('app'));
