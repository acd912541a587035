// The /dashboard document: a static shell (nothing per request, nothing per key) with the style and
// the client script (dashboard/client/, bundled: http/browser-script.ts) inlined and allowed by their
// hashes. Everything a key may see is fetched by the script with the key in the Authorization
// header and built as DOM nodes, never as HTML.
import { EXPORT_DATASETS, EXPORT_FORMATS, MODES } from '../core/types.ts';
import { MANIFEST_STATES } from '../exports/manifests.ts';
import { browserScript } from '../http/browser-script.ts';
import { cspHash, htmlPageHeaders, type HeaderList } from '../http/headers.ts';
import { DASHBOARD_STYLE } from './style.ts';

/** The page's whole script: one IIFE, nothing on window. */
export function dashboardScript(): string {
  return browserScript('dashboard/client/main.ts');
}

/**
 * Only this script and this style run; the script may talk to this origin only. form-action
 * 'self' because the sign-in form exists (its submission is handled by the script, and the key
 * field has no name, so even a submission without the script would carry no key).
 */
export const dashboardCsp = (): string =>
  [
    "default-src 'none'",
    `script-src ${cspHash(dashboardScript())}`,
    `style-src ${cspHash(DASHBOARD_STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');

/** Every page's set (http/headers.ts), and no caching of a page that shows keyed data. */
export const dashboardHeaders = (): HeaderList => [['Cache-Control', 'no-store'], ...htmlPageHeaders(dashboardCsp())];

const options = (values: readonly string[], labels: Record<string, string>, selected: string) =>
  values.map((v) => `<option value="${v}"${v === selected ? ' selected' : ''}>${labels[v] ?? v}</option>`).join('');

/**
 * The export list's filters, with the API's own values. Handled by the script on submit (one
 * request per Apply: the list is metered); novalidate so that a bad range gets the page's own
 * message rather than the browser's bubble. No name attributes: without the script it sends nothing.
 */
const FORMAT_LABELS = { parquet: 'Parquet', 'ndjson.gz': 'NDJSON (gzip)' };

const EXPORTS_FILTER = `
<form id="exports-filter" class="filters" novalidate hidden aria-label="Filter export files">
<div class="field"><label for="exports-dataset">Dataset</label><select id="exports-dataset">
<option value="">All datasets</option>${options(EXPORT_DATASETS, {}, '')}</select></div>
<div class="field"><label for="exports-format">Format</label><select id="exports-format">
<option value="">All formats</option>${options(EXPORT_FORMATS, FORMAT_LABELS, '')}</select></div>
<div class="field"><label for="exports-state">State</label><select id="exports-state">
${options(MANIFEST_STATES, {}, 'ready')}</select></div>
<div class="field"><label for="exports-from">From service day</label><input id="exports-from" type="date"
  aria-describedby="exports-filter-error"></div>
<div class="field"><label for="exports-to">To service day</label><input id="exports-to" type="date"
  aria-describedby="exports-filter-error"></div>
<div class="field actions"><button type="submit" id="exports-apply" class="primary">Apply</button>
<button type="button" id="exports-clear">Clear</button></div>
<p id="exports-filter-error" class="error" role="alert" hidden></p></form>`;

/**
 * The performance section, closed until asked for: opening it loads the mode's route list (one
 * metered request), Show asks the performance endpoint. Handled by the script, like the filters.
 */
const PERFORMANCE_PANEL = `
<details id="performance-panel"><summary>On-time arrivals, headways and prediction accuracy of one route,
  by day or week</summary>
<p class="hint">Opening this loads the route list (one metered request); each Show makes two (the periods, and the
whole range for prediction accuracy).</p>
<form id="performance-form" class="filters" novalidate aria-label="Route and service days">
<div class="field"><label for="performance-mode">Mode</label><select id="performance-mode">
${options(MODES, { bus: 'Bus', rail: 'Rail', streetcar: 'Streetcar' }, 'bus')}</select></div>
<div class="field wide"><label for="performance-route">Route or line</label><select id="performance-route" disabled
  aria-describedby="performance-form-error">
<option value="">Open the section to load the list</option></select></div>
<div class="field"><label for="performance-from">From service day</label><input id="performance-from" type="date"
  aria-describedby="performance-form-error"></div>
<div class="field"><label for="performance-to">To service day</label><input id="performance-to" type="date"
  aria-describedby="performance-form-error"></div>
<div class="field"><label for="performance-group">Group</label><select id="performance-group">
${options(['day', 'week'], { day: 'Day', week: 'ISO week' }, 'day')}</select></div>
<div class="field actions"><button type="submit" id="performance-show" class="primary">Show</button>
<button type="button" id="performance-reload" hidden>Load the list again</button></div>
<p id="performance-form-error" class="error" role="alert" hidden></p></form>
<p class="totals" id="performance-summary" aria-live="polite"></p>
<div id="performance-body"></div></details>`;

const SECTIONS = `
<div class="grid"><section id="plan" class="card" aria-labelledby="plan-h"><h2 id="plan-h">Plan and limits</h2>
<p class="error" role="alert" hidden></p><div id="plan-body"></div>
<h3>Current rate-limit window</h3><div id="window-body"></div></section>
<section id="streams" class="card" aria-labelledby="streams-h"><h2 id="streams-h">Open streams</h2>
<p class="error" role="alert" hidden></p><div id="streams-body"></div></section></div>
<section id="usage" class="card" aria-labelledby="usage-h"><h2 id="usage-h">Usage, last 14 days</h2>
<p class="error" role="alert" hidden></p><p class="empty" id="usage-range"></p><p class="totals" id="usage-totals"></p>
<figure class="chart" aria-describedby="usage-legend"><div id="usage-chart"></div></figure>
<ul class="legend" id="usage-legend"><li><span class="key req" aria-hidden="true"></span>Requests (bars, left axis)</li>
<li><span class="key err" aria-hidden="true"></span>of which errors</li>
<li><span class="key min" aria-hidden="true"></span>Connection-minutes (line, right axis)</li></ul>
<details><summary>The figures as a table</summary><div id="usage-table"></div></details></section>
<section id="webhooks" class="card" aria-labelledby="webhooks-h"><h2 id="webhooks-h">Webhook endpoints</h2>
<p class="error" role="alert" hidden></p><div id="endpoints-body"></div>
<h3>Recent deliveries</h3><div id="deliveries-body"></div></section>
<section id="exports" class="card" aria-labelledby="exports-h"><h2 id="exports-h">History exports</h2>
<p class="error" role="alert" hidden></p>${EXPORTS_FILTER}<p class="totals" id="exports-summary" aria-live="polite"></p>
<div id="exports-body"></div>
<p><button type="button" id="exports-more" hidden>Load more files</button></p></section>
<section id="performance" class="card" aria-labelledby="performance-h"><h2 id="performance-h">Route performance</h2>
<p class="error" role="alert" hidden></p>${PERFORMANCE_PANEL}</section>`;

export function renderDashboardPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Developer dashboard · Transit API</title>
<link rel="icon" href="data:,">
<style>${DASHBOARD_STYLE}</style></head>
<body><main>
<div class="top"><h1>Developer dashboard</h1>
<div id="session" hidden><span id="who"></span><span id="updated" aria-live="polite"></span>
<button type="button" id="refresh">Refresh</button><button type="button" id="signout">Sign out</button></div></div>
<p id="notice" class="notice" role="status" aria-live="polite" hidden></p>
<section id="signin" class="card" aria-labelledby="signin-h"><h2 id="signin-h">Sign in</h2>
<form id="signin-form" method="post" autocomplete="off">
<label for="key">API key</label>
<input id="key" type="password" autocomplete="off" autocapitalize="off" spellcheck="false" required
  placeholder="tk_live_…" aria-describedby="key-hint">
<button type="submit" id="signin-button" class="primary">Sign in</button>
</form>
<p id="signin-error" class="error" role="alert" hidden></p>
<p class="hint" id="key-hint">Paste an API key. It is kept in this browser tab only (session storage) and sent in the
<code>Authorization</code> header to this server; it never appears in a URL. Sign out removes it.</p>
<noscript><p class="error">The dashboard needs JavaScript.</p></noscript></section>
<div id="app" hidden>${SECTIONS}</div>
<footer><a href="docs">API documentation</a> · <a href="status">Service status</a> · Times in UTC</footer>
</main><script>${dashboardScript()}</script></body></html>`;
}
