// Small shared pieces: html (htm bound to Preact), error and notice boxes, tables, the
// verdict badge and a loader hook.
import { h } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

let ids = 0;
/** A page-unique id for label/aria wiring. */
export const uid = (p = 'f') => `${p}-${++ids}`;

/** Shows an API error as its `detail` (the API's own words), announced to screen readers. */
export function ErrorBox({ error }) {
  if (!error) return null;
  const code = error.code ? html` <span class="muted">(${error.code})</span>` : null;
  return html`<div class="error" role="alert">${error.message || String(error)}${code}</div>`;
}

export function Notice({ children }) {
  return children ? html`<div class="notice" role="status">${children}</div>` : null;
}

/** Loads `fn()` when `deps` change; `reload()` loads again. */
export function useLoad(fn, deps) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ loading: false, data, error: null }),
      (error) => live && setState({ loading: false, data: null, error }),
    );
    return () => { live = false; };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

function cell(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Rows of objects as a table: columns are the union of the rows' keys (first 20). */
export function RowsTable({ rows, caption, max = 100 }) {
  if (!rows || rows.length === 0) return html`<p class="muted">No rows.</p>`;
  const cols = [];
  for (const r of rows.slice(0, max)) {
    if (r && typeof r === 'object' && !Array.isArray(r)) {
      for (const k of Object.keys(r)) if (!cols.includes(k) && cols.length < 20) cols.push(k);
    }
  }
  const shown = rows.slice(0, max);
  return html`<div class="scroll"><table>
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr>${cols.length ? cols.map((c) => html`<th scope="col">${c}</th>`) : html`<th scope="col">value</th>`}</tr></thead>
    <tbody>${shown.map((r) => html`<tr>${cols.length ? cols.map((c) => html`<td>${cell(r?.[c])}</td>`) : html`<td>${cell(r)}</td>`}</tr>`)}</tbody>
  </table></div>
  ${rows.length > max ? html`<p class="muted">Showing ${max} of ${rows.length} rows.</p>` : null}`;
}

/** The verdict of a looping envelope (`_pagingComplete`, `_stoppedBy`, `_itemCount`,
 * `_total`) or of a workflow step's `_loop` (`complete`, `stoppedBy`, `itemCount`). */
export function verdictOf(r) {
  if (!r || typeof r !== 'object') return null;
  if ('_pagingComplete' in r) {
    return { complete: r._pagingComplete === true, stoppedBy: r._stoppedBy, count: r._itemCount, total: r._total, likelyMore: r._likelyMoreRows, note: r._note };
  }
  if (r._loop && typeof r._loop === 'object') {
    const l = r._loop;
    return { complete: l.complete === true, stoppedBy: l.stoppedBy, count: l.itemCount, total: undefined, note: l.note };
  }
  return null;
}

export function VerdictBadge({ verdict }) {
  if (!verdict) return html`<span class="badge neutral">no looping verdict</span>`;
  const of = verdict.total !== undefined && verdict.total !== null ? ` of ${verdict.total}` : '';
  const why = verdict.complete ? '' : ` — stopped by ${verdict.stoppedBy || 'unknown'}`;
  const text = `${verdict.complete ? 'Complete' : 'Partial'}: ${verdict.count ?? '?'}${of} rows${why}`;
  return html`<span class=${`badge ${verdict.complete ? 'complete' : 'partial'}`} data-verdict=${verdict.complete ? 'complete' : 'partial'}>${text}</span>`;
}

/** A labelled text field bound to a state pair. */
export function Field({ label, value, onInput, type = 'text', hint, required, ...rest }) {
  const id = rest.id || label.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const hintId = hint ? `${id}-hint` : undefined;
  return html`<div>
    <label for=${id}>${label}</label>
    <input id=${id} type=${type} value=${value} required=${required} aria-describedby=${hintId}
      onInput=${(e) => onInput(e.currentTarget.value)} ...${rest} />
    ${hint ? html`<div id=${hintId} class="muted">${hint}</div>` : null}
  </div>`;
}

export function Select({ label, value, onChange, options, id }) {
  const fid = id || label.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return html`<div>
    <label for=${fid}>${label}</label>
    <select id=${fid} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${options.map(([v, t]) => html`<option value=${v} selected=${v === value}>${t}</option>`)}
    </select>
  </div>`;
}

/** Parses JSON typed by a person; throws an Error that says where it is wrong. */
export function parseJson(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not valid JSON: ${e.message}`);
  }
}
