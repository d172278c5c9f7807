// A new org member's first ten minutes in the Studio console, in headless Debian
// Chromium driven by playwright-core, against the service at $B (admin token $ADMIN):
// sign in, create a provider, import an OpenAPI document served by a small upstream this
// test starts, bind its tools to an agent, flip "Allow response looping for this tool"
// (found by its accessible name, checked against the API; then the same switch on the
// tool card, per agent binding the tool, off and on again) and see the reserved
// arguments appear in `steps`, run a paginated call and watch its progress bar reach the
// end, read the verdict, query the stored result, edit a workflow (an error shown at its
// step) and run it, look up connections, sign out. axe-core checks every page (no serious
// or critical violation); a screenshot of each page goes to docs/studio/. The page's own
// CSP stays on (no bypass): a violation report fails the test.
// Bounded: LOOPGATE_STUDIO_SECONDS (90) for the whole walk, every wait has a timeout.
import { createServer } from 'node:http';
import { readFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const B = process.env.B;
const ADMIN = process.env.ADMIN;
if (!B || !ADMIN) throw new Error('set B (the service URL) and ADMIN (its admin token)');
const SHOTS = process.env.LOOPGATE_STUDIO_SHOTS || join(here, '../../docs/studio');
const BUDGET_MS = 1000 * Number(process.env.LOOPGATE_STUDIO_SECONDS || 90);
const CHROMIUM = process.env.LOOPGATE_CHROMIUM || '/usr/bin/chromium';
const started = Date.now();
const deadline = setTimeout(() => {
  console.error(`studio walk: did not finish within ${BUDGET_MS / 1000} s`);
  process.exit(1);
}, BUDGET_MS);
deadline.unref();
const log = (m) => console.error(`studio walk [${((Date.now() - started) / 1000).toFixed(1)} s] ${m}`);

// --- the upstream: an inventory API that pages by offset, slowly enough to watch ------
const ITEMS = Array.from({ length: 230 }, (_, i) => ({
  id: i + 1,
  name: `item ${i + 1}`,
  category: ['tools', 'paint', 'garden'][i % 3],
  price: (i % 7) + 1,
}));
const PAGE_MAX = 20; // 12 pages
const LOOP = 'Allow response looping for this tool';
const PAGE_DELAY_MS = 600;
const doc = (base) => ({
  openapi: '3.0.3',
  info: { title: 'Inventory', version: '1.0.0' },
  servers: [{ url: base }],
  paths: {
    '/items': {
      get: {
        operationId: 'listItems',
        summary: 'List inventory items',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: PAGE_MAX } },
          { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0 } },
          { name: 'category', in: 'query', schema: { type: 'string' } },
        ],
        responses: { 200: { description: 'A page of items' } },
      },
    },
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        summary: 'Get one item',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 200: { description: 'An item' } },
      },
    },
  },
});
let upstreamRequests = 0;
const upstream = createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  const send = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (u.pathname === '/items') {
    upstreamRequests++;
    const limit = Math.min(Number(u.searchParams.get('limit') || 10), PAGE_MAX);
    const offset = Number(u.searchParams.get('offset') || 0);
    const cat = u.searchParams.get('category');
    const rows = cat ? ITEMS.filter((i) => i.category === cat) : ITEMS;
    setTimeout(() => send(200, { items: rows.slice(offset, offset + limit), total: rows.length }), PAGE_DELAY_MS);
  } else if (u.pathname.startsWith('/items/')) {
    const item = ITEMS.find((i) => String(i.id) === u.pathname.slice(7));
    send(item ? 200 : 404, item || { error: 'no such item' });
  } else {
    send(404, { error: 'not found' });
  }
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const UP = `http://127.0.0.1:${upstream.address().port}`;

// --- a webhook receiver: what the service delivers when a run finishes -----------------
const delivered = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    delivered.push({ headers: req.headers, body: JSON.parse(body) });
    res.writeHead(204).end();
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const HOOK = `http://127.0.0.1:${receiver.address().port}/hooks`;

// --- the admin seeds an org, a member's key and a deployment ---------------------------
async function call(method, path, token, body) {
  const r = await fetch(`${B}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30000),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}
const org = (await call('POST', '/v1/orgs', ADMIN, { name: `studio-walk-${Date.now()}` })).body;
const KEY = (await call('POST', `/v1/orgs/${org.id}/api-keys`, ADMIN, { name: 'new member', scopes: ['studio', 'runtime', 'mint'] })).body.key;
const dep = (await call('POST', `/v1/orgs/${org.id}/deployments`, ADMIN, { name: 'production', cache: 'on' })).body;
assert.ok(KEY && dep.id, 'seeded a key and a deployment');

// --- the browser ---------------------------------------------------------------------
mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  timeout: 30000,
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
context.setDefaultTimeout(15000);
const page = await context.newPage();
const problems = [];
page.on('console', (m) => {
  if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console error: ${m.text()}`);
});
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
const urls = [];
page.on('request', (r) => urls.push(r.url()));
const axeSource = readFileSync(join(here, 'node_modules/axe-core/axe.min.js'), 'utf8');
const a11y = {};

/** axe-core on the page as it is: no serious or critical violation; a screenshot. */
async function check(name) {
  // evaluated by the browser's debugger, not injected as a script: the CSP stays on
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) await page.evaluate(axeSource);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  a11y[name] = r.violations.map((v) => `${v.id} (${v.impact})`);
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [],
    `axe on ${name}: serious or critical violations`);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  log(`${name}: axe ok (${r.violations.length} minor), screenshot written`);
}
const text = (sel) => page.locator(sel).innerText();
const nav = (name) => page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name, exact: true }).click();

try {
  // 1. the page: served with its security headers, offline
  const res = await page.goto(`${B}/studio`);
  const csp = res.headers()['content-security-policy'] || '';
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  await page.getByLabel('Org API key').waitFor();
  await check('sign-in');

  // a wrong key: the API's own detail is what the member reads
  const bad = await fetch(`${B}/v1/providers?limit=1`, { headers: { authorization: 'Bearer lg_wrong' } }).then((r) => r.json());
  await page.getByLabel('Org API key').fill('lg_wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  assert.ok((await page.getByRole('alert').innerText()).includes(bad.detail), 'sign-in error is the API detail');

  // 2. sign in
  await page.getByLabel('Org API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 1, 'the key is kept for this tab only');
  assert.equal(await page.evaluate(() => localStorage.length), 0);

  // 3. create a provider, import the upstream's document (uploaded as a file)
  await page.getByLabel('Name', { exact: true }).fill('Inventory');
  await page.getByLabel('Base URL').fill(UP);
  await page.getByRole('button', { name: 'Create provider' }).click();
  await page.getByText('Provider Inventory created').waitFor();
  await page.getByLabel('Upload a document (JSON or YAML)').setInputFiles({
    name: 'inventory.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(doc(UP))),
  });
  await page.waitForFunction(() => document.querySelector('textarea')?.value.includes('listItems'));
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByText('Imported 2 operations, one tool each.').waitFor();
  const imported = await page.getByRole('table', { name: 'Imported operations' }).innerText();
  assert.match(imported, /GET \/items\s+listItems/);
  assert.match(imported, /GET \/items\/\{id\}\s+getItem/);
  await check('providers');

  // 4. tools: each card says how it pages
  await nav('Tools');
  const card = page.getByRole('article', { name: 'listItems' });
  await card.getByText('offset style').waitFor();
  assert.match(await card.innerText(), /detected from the schema, confidence high/);
  // each card reads its pagination on its own: wait for this one's too
  await page.getByRole('article', { name: 'getItem' }).getByText(/not paginated/).waitFor();
  await check('tools');

  // 5. an agent, its tools bound, the placement preview
  await nav('Agents');
  await page.getByLabel('Agent name').fill('Stock assistant');
  await page.getByLabel('Deployment id').fill(dep.id);
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.getByRole('heading', { name: 'Agent Stock assistant' }).waitFor();
  const agentId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  await page.getByRole('button', { name: /Bind all 2 unbound tools/ }).click();
  await page.getByText('2 tools bound to Stock assistant.').waitFor();
  const direct = page.getByRole('list', { name: 'Offered directly' });
  await direct.getByText('listItems').waitFor();
  assert.equal(await direct.getByRole('listitem').count(), 2, 'both own tools offered directly');
  const tools = (await call('GET', '/v1/tools', KEY)).body.data;
  const listItems = tools.find((t) => t.name === 'listItems');

  // before: no reserved argument in the model's view
  const before = (await call('POST', `/v1/agents/${agentId}/threads/look-before/steps`, KEY, {})).body;
  assert.ok(!('_all_pages' in before.tools.find((t) => t.name === 'listItems').input_schema.properties));

  // 6. flip the looping switch, found by its accessible name, and check it against the API
  const sw = page.getByRole('article', { name: 'listItems' })
    .getByRole('switch', { name: LOOP, exact: true });
  assert.equal(await sw.isChecked(), false);
  await sw.check();
  await page.getByText('Binding of listItems saved.').waitFor();
  const binding = (await call('GET', `/v1/agents/${agentId}/tools/${listItems.id}`, KEY)).body;
  assert.equal(binding.loop_responses, true, 'the switch wrote loop_responses: true');
  assert.equal(await page.getByRole('article', { name: 'listItems' })
    .getByRole('switch', { name: LOOP, exact: true }).isChecked(), true);
  // discovery: true moves getItem to the pool, and the preview follows
  await page.getByRole('article', { name: 'getItem' }).getByLabel('discovery').selectOption('pooled');
  await page.getByRole('list', { name: 'Pooled' }).getByText('getItem').waitFor();
  await check('agent');

  // 6b. the same switch on the tool card, for each agent binding the tool: it shows the
  // binding as saved, and flipping it there changes the same binding
  await nav('Tools');
  const bound = page.getByRole('article', { name: 'listItems' })
    .getByRole('list', { name: 'Agents binding listItems' })
    .getByRole('listitem', { name: 'Stock assistant' });
  const cardSwitch = bound.getByRole('switch', { name: LOOP, exact: true });
  await cardSwitch.waitFor();
  assert.equal(await cardSwitch.isChecked(), true, 'the tool card shows the agent page\'s change');
  await cardSwitch.uncheck();
  await bound.getByText('Looping off for listItems in Stock assistant.').waitFor();
  assert.equal((await call('GET', `/v1/agents/${agentId}/tools/${listItems.id}`, KEY)).body.loop_responses, false);
  await cardSwitch.check();
  await bound.getByText('Looping allowed for listItems in Stock assistant.').waitFor();
  assert.equal((await call('GET', `/v1/agents/${agentId}/tools/${listItems.id}`, KEY)).body.loop_responses, true);
  await check('tools-bound');
  // back to the agent, whose page reads the binding again
  await bound.getByRole('link', { name: 'Stock assistant' }).click();
  await page.getByRole('heading', { name: 'Agent Stock assistant' }).waitFor();
  assert.equal(await page.getByRole('article', { name: 'listItems' })
    .getByRole('switch', { name: LOOP, exact: true }).isChecked(), true);

  // 7. the playground: the reserved arguments appear in `steps`, a streamed walk
  await page.getByRole('link', { name: 'Open in the playground' }).click();
  await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Load the next step' }).click();
  await page.getByLabel('Tool', { exact: true }).selectOption('listItems');
  await page.getByLabel('_all_pages', { exact: false }).first().waitFor();
  for (const reserved of ['_all_pages', '_fields']) {
    assert.ok(await page.locator(`#arg-${reserved}`).count(), `${reserved} offered in steps`);
  }
  await check('playground');
  await page.locator('#arg-_all_pages').check();
  upstreamRequests = 0;
  await page.getByRole('button', { name: 'Run listItems' }).click();
  await page.locator('#walk-progress[data-state="running"]').waitFor({ timeout: 20000 });
  const mid = await page.locator('#walk-progress').evaluate((p) => ({ value: p.value, max: p.max }));
  assert.ok(mid.value < mid.max, `the bar moves while the walk runs (${mid.value} of ${mid.max})`);
  log(`progress seen mid-walk: ${await text('#progress-text')}`);
  await page.locator('#walk-progress[data-state="finished"]').waitFor({ timeout: 30000 });
  const end = await page.locator('#walk-progress').evaluate((p) => ({ value: p.value, max: p.max }));
  assert.equal(end.value, end.max, 'the bar reached the end');
  const verdict = await page.locator('[data-verdict]').innerText();
  assert.equal(await page.locator('[data-verdict]').getAttribute('data-verdict'), 'complete');
  assert.match(verdict, /Complete: 230 of 230 rows/);
  assert.ok(upstreamRequests >= 12, `every page fetched (${upstreamRequests} requests)`);
  assert.ok(await page.getByRole('table', { name: 'Rows of the result' }).getByRole('row').count() > 1);
  await check('playground-result');

  // 8. the stored result, queried with a filter and aggregates
  await page.getByLabel('Filter (JSON clauses', { exact: false })
    .fill('[{"field": "category", "op": "eq", "value": "paint"}]');
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.locator('#query-total').waitFor();
  const paint = ITEMS.filter((i) => i.category === 'paint');
  assert.match(await text('#query-total'), new RegExp(`^${paint.length} stored rows match; showing 20`));
  await page.getByLabel('Aggregate (JSON', { exact: false }).fill('{"count": true, "sum": ["price"]}');
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByLabel('Aggregates').waitFor();
  await page.getByText('Totals over the complete stored walk.').waitFor();
  const agg = await page.getByLabel('Aggregates').innerText();
  assert.ok(agg.includes(String(paint.reduce((s, i) => s + i.price, 0))), `sum of paint prices in ${agg}`);
  await check('playground-query');

  // 9a. a webhook endpoint for finished runs: its secret shown once
  await nav('Webhooks');
  await page.getByLabel('Endpoint URL').fill(HOOK);
  await page.getByRole('button', { name: 'Create endpoint' }).click();
  await page.getByText(`Endpoint ${HOOK} created.`).waitFor();
  const secret = await text('#whe-secret');
  assert.match(secret, /^whsec_/, 'the signing secret is shown at creation');
  const endpoints = (await call('GET', '/v1/webhook-endpoints', KEY)).body.data;
  assert.equal(endpoints.length, 1);
  assert.ok(!('secret' in endpoints[0]) || endpoints[0].secret == null, 'a listed endpoint has no secret');

  // 9. a workflow: an error shown at its step, fixed, run, each step's _loop verdict
  await nav('Workflows');
  await page.getByLabel('Workflow name').fill('Nightly stock');
  await page.locator('#wf-steps').fill(JSON.stringify([
    { id: 'all', type: 'tool', tool: 'listItems', input: {}, loop: { all_pages: true } },
    { id: 'oops', type: 'tool', tool: 'noSuchTool', input: {} },
  ]));
  await page.getByRole('button', { name: 'Save workflow' }).click();
  const atStep = page.getByRole('list', { name: 'Steps' }).getByRole('listitem').nth(1).getByRole('alert');
  await atStep.waitFor();
  assert.match(await atStep.innerText(), /steps\[1\]\.tool 'noSuchTool'/);
  await check('workflow-error');
  await page.locator('#wf-steps').fill(JSON.stringify([
    { id: 'all', type: 'tool', tool: 'listItems', input: { category: 'garden' }, loop: { all_pages: true } },
  ]));
  await page.getByRole('button', { name: 'Save workflow' }).click();
  await page.getByRole('heading', { name: 'Runs of Nightly stock' }).waitFor();
  await page.getByRole('button', { name: 'Start a run' }).click();
  const garden = ITEMS.filter((i) => i.category === 'garden').length;
  for (let i = 0; i < 40; i++) {
    if (await page.getByText(`Complete: ${garden} rows`).count()) break;
    await page.waitForTimeout(500);
    await page.getByRole('button', { name: 'Refresh runs' }).click();
  }
  await page.getByText(`Complete: ${garden} rows`).waitFor({ timeout: 2000 });
  await check('workflows');

  // 9b. a schedule of the workflow: its next due times, paused, checked against the API
  const wfId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  await page.getByLabel('Cron expression').fill('30 6 * * 1-5');
  await page.getByLabel('Time zone').fill('Europe/Paris');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  await page.getByText('Schedule 30 6 * * 1-5 (Europe/Paris) created.').waitFor();
  const [sch] = (await call('GET', `/v1/workflows/${wfId}/schedules`, KEY)).body.data;
  assert.equal(sch.timezone, 'Europe/Paris');
  // the panel reads the schedules again after the create: wait for its list to be drawn
  const nextRuns = page.getByRole('list', { name: `Next runs of ${sch.id}` }).getByRole('listitem');
  await nextRuns.nth(sch.next_runs.length - 1).waitFor();
  const shown = await nextRuns.allInnerTexts();
  assert.deepEqual(shown, sch.next_runs, 'the next three due times are the API\'s');
  await page.getByRole('button', { name: 'Pause schedule 30 6 * * 1-5' }).click();
  await page.getByText('Schedule 30 6 * * 1-5 paused.').waitFor();
  assert.equal((await call('GET', `/v1/schedules/${sch.id}`, KEY)).body.paused, true, 'the button paused it');
  await check('schedules');

  // 9c. the run's delivery: received, signed, and listed as succeeded
  for (let i = 0; i < 60 && delivered.length === 0; i++) await page.waitForTimeout(500);
  assert.equal(delivered.length, 1, 'the finished run was delivered once');
  const hook = delivered[0];
  assert.match(hook.headers['webhook-signature'] || '', /^v1,/);
  assert.ok(hook.headers['webhook-id'] && hook.headers['webhook-timestamp'], 'Standard Webhooks headers');
  assert.equal(hook.body.type, 'workflow_run.succeeded');
  await nav('Webhooks');
  await page.getByRole('link', { name: HOOK }).click();
  await page.getByRole('heading', { name: `Deliveries to ${HOOK}` }).waitFor();
  for (let i = 0; i < 20; i++) {
    if (await page.getByRole('table', { name: 'Deliveries' }).getByText('succeeded').count()) break;
    await page.waitForTimeout(500);
    await page.getByRole('button', { name: 'Refresh deliveries' }).click();
  }
  const rowsText = await page.getByRole('table', { name: 'Deliveries' }).innerText();
  assert.match(rowsText, /workflow_run\.succeeded\s+\S+\s+succeeded\s+1\s+204/);
  await check('webhooks');

  // 10. connections of an end user
  await nav('Connections');
  await page.getByLabel('End user id').fill('new-member');
  await page.getByRole('button', { name: 'Show connections' }).click();
  await page.getByText('No connections for new-member.').waitFor();
  await check('connections');

  // 11. sign out: the key is gone from the tab, and it was never in a URL
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Org API key').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'signing out forgets the key');
  assert.deepEqual(urls.filter((u) => u.includes(KEY)), [], 'the key never appears in a URL');
  assert.ok(urls.every((u) => u.startsWith(B)), `no request leaves the service: ${urls.filter((u) => !u.startsWith(B))}`);
  assert.deepEqual(problems, [], 'no CSP violation or page error');
  log(`done; minor axe findings: ${JSON.stringify(a11y)}`);
} catch (e) {
  await page.screenshot({ path: join(SHOTS, '..', '..', '.data', 'studio-failure.png'), fullPage: true }).catch(() => {});
  console.error(`studio walk failed at ${page.url()}; problems: ${JSON.stringify(problems)}`);
  throw e;
} finally {
  await browser.close();
  upstream.closeAllConnections();
  upstream.close();
  receiver.closeAllConnections();
  receiver.close();
}
log('studio walk: OK');
process.exit(0);
