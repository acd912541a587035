// Each section of the dashboard from the JSON the API answered (exports: exports.ts). Every value
// goes through el() as text or an attribute; links the server sends pass safeHref first.
import { drawUsageChart, usageTable } from './chart.ts';
import { $, el, fill, sectionError, timeEl, type Children } from './dom.ts';
import { fmtNumber, fmtSeconds } from './format.ts';
import type { Account, Delivery, Endpoint, Page, PlanLimits, RateWindow, StreamsView, Usage } from './types.ts';

function fact(name: string, label: string, value: Children): HTMLElement {
  return el('div', { 'data-fact': name }, [el('dt', { text: label }), el('dd', null, value)]);
}

export interface Heading {
  label: string;
  className?: string;
}

export function table(className: string, headings: Heading[], rows: HTMLElement[], empty: string): HTMLElement {
  if (!rows.length) return el('p', { class: 'empty', text: empty });
  const head = el(
    'tr',
    null,
    headings.map((h) => el('th', { scope: 'col', class: h.className || null, text: h.label })),
  );
  return el(
    'div',
    { class: 'table' },
    el('table', { class: className }, [el('thead', null, head), el('tbody', null, rows)]),
  );
}

export function cell(content: Children, className?: string): HTMLElement {
  return el('td', { class: className || null }, content);
}

export function badge(text: string, tone?: string): HTMLElement {
  return el('span', { class: `badge ${tone || ''}`, text });
}

function perWindow(limits: PlanLimits): string {
  return `${fmtNumber(limits.requests_per_window)} requests per ${fmtSeconds(limits.window_seconds)}`;
}

export function renderWindow(w: RateWindow): void {
  const used = Math.max(0, w.limit - w.remaining);
  fill($('window-body'), [
    el('meter', {
      min: 0,
      max: Math.max(1, w.limit),
      value: used,
      low: w.limit * 0.7,
      high: w.limit * 0.9,
      optimum: 0,
      'aria-label': 'Requests used in the current window',
    }),
    el('p', { class: 'totals', 'data-remaining': w.remaining }, [
      el('strong', { text: fmtNumber(w.remaining) }),
      ` of ${fmtNumber(w.limit)} requests left in this window · ` +
        (used > 0 ? 'the oldest counted request leaves it in ' : 'resets in ') +
        fmtSeconds(w.reset_seconds),
    ]),
  ]);
}

export function renderAccount(account: Account): void {
  const { key, limits } = account;
  sectionError('plan', null);
  $('who').textContent = `${key.prefix}…${key.name ? ` · ${key.name}` : ''}${key.test ? ' · test key' : ''}`;
  fill($('plan-body'), [
    el('p', { class: 'totals' }, [
      el('span', { class: `plan p-${account.plan}`, 'data-plan': account.plan, text: account.plan }),
      ' ',
      el('span', null, [
        key.test ? 'Test key ' : 'Live key ',
        el('code', { text: `${key.prefix}…` }),
        key.name ? ` (${key.name})` : '',
        ', created ',
        timeEl(key.created_at),
      ]),
    ]),
    el('dl', { class: 'facts' }, [
      fact('requests', 'Requests', perWindow(limits)),
      fact(
        'sse_streams',
        'Event streams',
        limits.sse_streams > 0 ? `${fmtNumber(limits.sse_streams)} open at a time` : 'not included',
      ),
      fact('max_page_size', 'Page size', `up to ${fmtNumber(limits.max_page_size)} items`),
      fact('webhook_endpoints', 'Webhook endpoints', `up to ${fmtNumber(limits.webhook_endpoints)}`),
      fact('history_exports', 'History exports', limits.history_exports ? 'included' : 'not included'),
    ]),
  ]);
  renderWindow(account.window);
  renderStreams(account.streams);
}

function renderStreams(streams: StreamsView): void {
  sectionError('streams', null);
  const summary =
    streams.allowed > 0
      ? `${fmtNumber(streams.open)} of ${fmtNumber(streams.allowed)} event streams open`
      : 'Event streams (server-sent events) are not part of this plan.';
  const rows = streams.connections.map((c) =>
    el('tr', null, [
      cell(el('code', { text: c.endpoint })),
      cell(timeEl(c.opened_at)),
      cell(fmtNumber(c.minutes), 'num'),
    ]),
  );
  fill($('streams-body'), [
    el('p', { class: 'totals', 'data-open': streams.open, text: summary }),
    streams.allowed > 0 || rows.length
      ? table(
          'streams',
          [{ label: 'Stream' }, { label: 'Opened' }, { label: 'Minutes so far', className: 'num' }],
          rows,
          'No stream is open now.',
        )
      : null,
  ]);
}

export function renderUsage(usage: Usage): void {
  sectionError('usage', null);
  const t = usage.totals || {};
  $('usage-range').textContent = `${usage.from} to ${usage.to} (${usage.unit_timezone} days)`;
  fill($('usage-totals'), [
    el('strong', { 'data-total': 'requests', text: fmtNumber(t.requests) }),
    ' requests · ',
    el('strong', { 'data-total': 'errors', text: fmtNumber(t.errors) }),
    ' errors · ',
    el('strong', { 'data-total': 'connection_minutes', text: fmtNumber(t.connection_minutes) }),
    ' connection-minutes',
  ]);
  drawUsageChart($('usage-chart'), usage);
  fill($('usage-table'), usageTable(usage));
}

const DELIVERY_TONE: Record<string, string> = { succeeded: 'ok', pending: '', retrying: 'warn', failed: 'bad' };

function endpointState(ep: Endpoint): HTMLElement {
  if (!ep.enabled) return badge(`disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ''}`, 'bad');
  if (ep.failing_since)
    return el('span', null, [
      badge('failing', 'warn'),
      el('span', { class: 'sub' }, ['since ', timeEl(ep.failing_since)]),
    ]);
  return badge('enabled', 'ok');
}

export function renderWebhooks(endpoints: Page<Endpoint>, deliveries: Page<Delivery>, limits: PlanLimits | null): void {
  sectionError('webhooks', null);
  const urls: Record<string, string> = {};
  for (const ep of endpoints.data) urls[ep.id] = ep.url;
  const epRows = endpoints.data.map((ep) => {
    const types = ep.filters?.event_types ? ep.filters.event_types.join(', ') : 'default event types';
    return el('tr', { 'data-endpoint': ep.id }, [
      cell([
        el('code', { text: ep.url }),
        ep.description ? el('span', { class: 'sub desc', text: ep.description }) : null,
        el('span', { class: 'sub', text: ep.id }),
      ]),
      cell(types),
      cell(endpointState(ep)),
      cell(timeEl(ep.created_at), 'hide-narrow'),
    ]);
  });
  fill($('endpoints-body'), [
    el('p', {
      class: 'totals',
      text:
        `${fmtNumber(endpoints.data.length)} of up to ` +
        `${fmtNumber(limits ? limits.webhook_endpoints : NaN)} endpoints`,
    }),
    table(
      'endpoints',
      [{ label: 'Endpoint' }, { label: 'Events' }, { label: 'State' }, { label: 'Created', className: 'hide-narrow' }],
      epRows,
      'No webhook endpoint is registered for this key. Register one with POST /api/v1/webhooks/endpoints.',
    ),
  ]);
  const dRows = deliveries.data.map((d) => {
    const last = d.last_status_code !== null ? `HTTP ${d.last_status_code}` : d.last_error || '—';
    return el('tr', { 'data-delivery': d.id, 'data-state': d.state }, [
      cell([
        el('code', { text: d.event_type }),
        el('span', { class: 'sub', text: urls[d.endpoint_id] || d.endpoint_id }),
        el('span', { class: 'sub' }, timeEl(d.created_at)),
      ]),
      cell([
        badge(d.state, DELIVERY_TONE[d.state]),
        el('span', { class: 'sub', text: d.attempt_count + (d.attempt_count === 1 ? ' attempt' : ' attempts') }),
      ]),
      cell(
        [last, d.next_attempt_at ? el('span', { class: 'sub' }, ['next attempt ', timeEl(d.next_attempt_at)]) : null],
        'hide-narrow',
      ),
    ]);
  });
  fill(
    $('deliveries-body'),
    table(
      'deliveries',
      [{ label: 'Event, endpoint, time' }, { label: 'State' }, { label: 'Last response', className: 'hide-narrow' }],
      dRows,
      'No delivery yet.',
    ),
  );
}
