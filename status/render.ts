// The page's sections as HTML, rendered on the server from the status document: the first page
// load and every streamed update use the same function, so the live page cannot drift from a
// reload. Times are <time data-age> elements whose text the page's script keeps current.
import { escapeHtml as esc } from '../http/html.ts';
import { componentName } from './incidents.ts';
import type {
  AlertIngestion,
  ApiStatus,
  ApiWindow,
  ComponentHistory,
  ComponentState,
  EdgeHealth,
  FeedRuleFindings,
  NodeStatus,
  FeedStatus,
  Incident,
  ScheduleStatus,
  Sparkline,
  StatusDocument,
} from './schema.ts';
import { isoRequired } from '../core/dates.ts';

export const SECTION_IDS = ['overall', 'feeds', 'alerts', 'api', 'nodes', 'history'] as const;
export type SectionId = (typeof SECTION_IDS)[number];

const LABEL: Record<ComponentState, string> = {
  operational: 'Operational',
  degraded: 'Degraded',
  down: 'Down',
  unknown: 'Unknown',
};

export function formatDuration(s: number): string {
  const v = Math.max(0, Math.round(s));
  if (v < 60) return `${v} s`;
  if (v < 3_600) return `${Math.floor(v / 60)} min`;
  if (v < 86_400) return `${Math.floor(v / 3_600)} h ${Math.floor((v % 3_600) / 60)} min`;
  return `${Math.floor(v / 86_400)} d ${Math.floor((v % 86_400) / 3_600)} h`;
}

function utc(isoText: string): string {
  return `${isoText.slice(0, 10)} ${isoText.slice(11, 16)} UTC`;
}

/** An age the page's script updates every second; `suffix` follows the number (" ago"). */
function age(isoText: string | null, nowMs: number, suffix = ' ago', none = '—'): string {
  if (isoText === null) return none;
  const text = `${formatDuration((nowMs - Date.parse(isoText)) / 1000)}${suffix}`;
  return `<time datetime="${esc(isoText)}" data-age="${esc(suffix)}" title="${esc(utc(isoText))}">${esc(text)}</time>`;
}

function badge(state: ComponentState): string {
  return `<span class="badge s-${state}">${LABEL[state]}</span>`;
}

const fact = (term: string, value: string) => `<div><dt>${esc(term)}</dt><dd>${value}</dd></div>`;
const pct = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(rate < 0.1 ? 1 : 0)} %`);
// latencies come from a millisecond clock: below 1 ms there is nothing more precise to say
const ms = (v: number | null) => (v === null ? '—' : v < 1 ? '< 1 ms' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);
const num = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 1 });

function card(component: string, title: string, state: ComponentState, reason: string, body: string): string {
  return (
    `<article class="card" data-component="${esc(component)}" data-state="${state}">` +
    `<header><h3>${esc(title)}</h3>${badge(state)}</header><p class="reason">${esc(reason)}</p>${body}</article>`
  );
}

export function renderOverall(doc: StatusDocument, nowMs: number): string {
  return (
    `<div class="banner s-${doc.state}" data-state="${doc.state}"><span class="dot" aria-hidden="true"></span>` +
    `<strong>${esc(doc.summary)}</strong><span class="meta">Updated ${age(doc.generated_at, nowMs)} · ` +
    `server up ${age(doc.started_at, nowMs, '')}</span></div>`
  );
}

/** 60 bars, one per minute: height from entities, colour from failures, grey without polls. */
export function renderSparkline(s: Sparkline, feedId: string): string {
  const max = Math.max(1, ...s.entities.map((e) => e ?? 0));
  const start = Date.parse(s.start);
  const bars = s.polls
    .map((polls, i) => {
      const failures = s.failures[i] ?? 0;
      const entities = s.entities[i] ?? null;
      const cls = polls === 0 ? 'none' : failures === polls ? 'bad' : failures > 0 ? 'warn' : 'ok';
      const h = polls === 0 ? 1 : failures === polls ? 24 : Math.max(3, Math.round(((entities ?? 0) / max) * 24));
      const minute = isoRequired(start + i * s.step_s * 1000).slice(11, 16);
      const tip =
        polls === 0
          ? `${minute}: no polls`
          : `${minute}: ${polls} polls, ${failures} failed${entities === null ? '' : `, ${entities} entities`}`;
      return `<rect class="${cls}" x="${i * 2}" y="${26 - h}" width="1.6" height="${h}"><title>${tip}</title></rect>`;
    })
    .join('');
  const failed = s.failures.reduce((a, b) => a + b, 0);
  const label = `Last hour of ${feedId}: ${s.polls.reduce((a, b) => a + b, 0)} polls, ${failed} failed`;
  return (
    '<figure class="spark"><svg viewBox="0 0 120 26" preserveAspectRatio="none" role="img" ' +
    `aria-label="${esc(label)}">` +
    `${bars}</svg><figcaption><span>60 min ago</span>` +
    '<span>entities per minute · red: failed polls</span><span>now</span></figcaption></figure>'
  );
}

/** The feed's rules that fired in the last hour: id, title, findings, one entity they were about. */
export function renderFindings(f: FeedStatus, nowMs: number): string {
  if (f.kind !== 'gtfs-rt') return '';
  if (f.findings.length === 0)
    return '<p class="findings-none"><small>Feed rules: no findings in the last hour</small></p>';
  const item = (r: FeedRuleFindings) =>
    `<li data-rule="${esc(r.rule)}" class="f-${r.severity}" data-firing="${r.firing}"><code>${esc(r.rule)}</code> ` +
    `<span class="title">${esc(r.title)}</span> <small><span class="count">${num(r.count_1h)}</span> in the last hour` +
    `${r.example_entity_id === null ? '' : ` · e.g. entity <span class="example">${esc(r.example_entity_id)}</span>`}` +
    ` · last ${age(r.last_seen_at, nowMs)}${r.firing ? '' : ' · stopped'}</small></li>`;
  return `<h4>Feed rules (last hour)</h4><ul class="findings">${f.findings.map(item).join('')}</ul>`;
}

export function renderFeed(f: FeedStatus, nowMs: number): string {
  const errorRate =
    f.error_rate_1h === null ? '—' : `${pct(f.error_rate_1h)} <small>(${f.failures_1h} of ${f.polls_1h} polls)</small>`;
  const lastError =
    f.last_error === null ? 'none' : `${esc(f.last_error)} <small>${age(f.last_error_at, nowMs)}</small>`;
  const facts = [
    fact('Last successful poll', age(f.last_success_at, nowMs, ' ago', 'never')),
    fact('Header timestamp age', age(f.header_timestamp, nowMs, '', 'no header')),
    fact('Freshness', `<span class="fresh-${f.freshness}">${f.freshness}</span>`),
    fact('Entities in last poll', num(f.entities)),
    ...(f.schedule_match
      ? [
          fact(
            'Trips matched to the schedule',
            `${pct(f.schedule_match.rate)} <small>(${num(f.schedule_match.matched)} of ` +
              `${num(f.schedule_match.trips)})</small>`,
          ),
        ]
      : []),
    fact('Error rate (1 h)', errorRate),
    fact('Failures in a row', String(f.consecutive_failures)),
    fact('Last error', lastError),
    fact('Poll interval', `${num(f.interval_s)} s`),
  ].join('');
  return card(
    `feed:${f.feed_id}`,
    f.feed_id,
    f.state,
    f.reason,
    `<dl class="facts">${facts}</dl>${renderFindings(f, nowMs)}${renderSparkline(f.sparkline, f.feed_id)}`,
  );
}

export function renderSchedule(s: ScheduleStatus, nowMs: number): string {
  const facts = [
    fact(
      'Version',
      s.version_id === null ? 'none' : `${s.version_id}${s.feed_version ? ` (${esc(s.feed_version)})` : ''}`,
    ),
    fact('Imported', age(s.imported_at, nowMs, ' ago', 'never')),
    fact(
      'Service',
      s.service_start_date && s.service_end_date ? `${s.service_start_date} to ${s.service_end_date}` : '—',
    ),
    fact(
      'Last check',
      `${age(s.last_check_at, nowMs, ' ago', 'never')}${
        s.last_check_outcome ? ` <small>${s.last_check_outcome}</small>` : ''
      }`,
    ),
    fact(
      'Last error',
      s.last_error === null ? 'none' : `${esc(s.last_error)} <small>${age(s.last_error_at, nowMs)}</small>`,
    ),
  ].join('');
  return card(
    `schedule:${s.schedule_id}`,
    `Schedule ${s.schedule_id}`,
    s.state,
    s.reason,
    `<dl class="facts">${facts}</dl>`,
  );
}

export function renderFeeds(doc: StatusDocument, nowMs: number): string {
  const cards = doc.feeds.map((f) => renderFeed(f, nowMs)).join('');
  const schedules = doc.schedules.map((s) => renderSchedule(s, nowMs)).join('');
  return (
    '<h2>Realtime feeds</h2>' +
    (cards ? `<div class="grid">${cards}</div>` : '<p class="empty">No feeds are configured.</p>') +
    (schedules ? `<h2>Static schedules</h2><div class="grid">${schedules}</div>` : '')
  );
}

export function renderAlerts(a: AlertIngestion, nowMs: number): string {
  const modes = Object.keys(a.active_by_mode) as Array<keyof AlertIngestion['active_by_mode']>;
  const rows = modes
    .map((m) => `<tr><th scope="row">${m}</th><td>${a.active_by_mode[m]}</td><td>${a.upcoming_by_mode[m]}</td></tr>`)
    .join('');
  const sources = a.sources.length
    ? `<ul class="sources">${a.sources
        .map(
          (s) =>
            `<li data-source="${esc(s.feed_id)}">${badge(s.state)} <span>${esc(s.feed_id)}</span>` +
            ` <small>${s.alerts} alerts · polled ${age(s.last_success_at, nowMs, ' ago', 'never')}</small></li>`,
        )
        .join('')}</ul>`
    : '<p class="empty">No alert sources.</p>';
  const body =
    '<div class="table"><table><thead><tr>' +
    '<th scope="col">Mode</th><th scope="col">Active</th><th scope="col">Upcoming</th></tr></thead>' +
    `<tbody>${rows}</tbody></table></div>` +
    `<dl class="facts">${fact('Last change', age(a.last_change_at, nowMs, ' ago', 'none yet'))}</dl>` +
    `<h4>Sources</h4>${sources}`;
  return card('alerts', 'Alert ingestion', a.state, a.reason, body);
}

function windowRow(label: string, w: ApiWindow): string {
  return (
    `<tr><th scope="row">${label}</th><td>${num(w.requests_per_minute)}</td><td>${pct(w.error_rate)}</td>` +
    `<td>${ms(w.p50_ms)}</td><td>${ms(w.p99_ms)}</td></tr>`
  );
}

export function renderApi(api: ApiStatus, nowMs: number): string {
  const w = api.webhooks;
  const outbox = w.depth === null ? 'not read yet' : `${num(w.depth)} waiting`;
  const body =
    '<div class="table"><table><thead><tr><th scope="col">Window</th><th scope="col">Requests/min</th>' +
    '<th scope="col">Errors (5xx)</th><th scope="col">p50</th><th scope="col">p99</th></tr></thead><tbody>' +
    `${windowRow('Last 5 min', api.last_5m)}${windowRow('Last 60 min', api.last_60m)}</tbody></table></div>` +
    `<dl class="facts">${fact('Open event streams', num(api.open_streams))}${fact('Webhook outbox', outbox)}` +
    fact('Oldest pending delivery', w.oldest_pending_at === null ? 'none' : age(w.oldest_pending_at, nowMs, ' old')) +
    `${fact('Outbox read', age(w.as_of, nowMs, ' ago', 'not yet'))}</dl>`;
  return card('api', 'Public API', api.state, api.reason, body);
}

const yesNo = (v: boolean | null, yes: string, no: string) => (v === null ? 'not checked yet' : v ? yes : no);
const seconds = (v: number | null) => (v === null ? '—' : `${v < 10 ? v.toFixed(1) : Math.round(v)} s`);

export function renderNode(n: NodeStatus, nowMs: number): string {
  const facts = [
    fact(
      'Broker',
      n.broker.state === 'up' ? 'connected' : `unreachable ${age(n.broker.down_since, nowMs, '', '')}`.trim(),
    ),
  ];
  if (n.live_state) {
    const l = n.live_state;
    facts.push(
      fact('Live state', l.age_s === null ? 'not read yet' : `${seconds(l.age_s)} old`),
      fact('Live changes applied', `${num(l.changes)} <small>(${num(l.snapshots)} whole reads)</small>`),
    );
  }
  if (n.ingest) {
    const i = n.ingest;
    const where = i.url
      ? `${esc(i.url)} <small>(${i.source === 'config' ? 'ingest.url' : 'announced'})</small>`
      : 'unknown';
    facts.push(
      fact('Ingest node', where),
      fact(
        'Ingest node answers',
        `${yesNo(i.reachable, 'yes', 'no')}${i.error ? ` <small>${esc(i.error)}</small>` : ''}`,
      ),
      fact('Forwarded requests', `${num(i.forwarded)} <small>(${num(i.forward_failures)} not answered)</small>`),
    );
  }
  return card(
    'node',
    `This node: ${n.node_id} (${n.role})`,
    n.state,
    n.reason,
    `<dl class="facts">${facts.join('')}</dl>`,
  );
}

function edgeRow(e: EdgeHealth, nowMs: number): string {
  return (
    `<tr data-edge="${esc(e.node_id)}"><th scope="row">${esc(e.node_id)}</th><td>${badge(e.state)}</td>` +
    `<td>${age(e.heard_at, nowMs)}</td><td>${seconds(e.live_state_age_s)}</td>` +
    `<td>${yesNo(e.ingest_reachable, 'yes', 'no')}</td><td>${num(e.requests_per_minute)}</td>` +
    `<td>${ms(e.p99_ms)}</td><td>${num(e.open_streams)}</td></tr>`
  );
}

export function renderNodes(doc: StatusDocument, nowMs: number): string {
  if (!doc.node) return '';
  const edges = doc.edges.length
    ? '<div class="table"><table><thead><tr><th scope="col">Edge</th><th scope="col">State</th>' +
      '<th scope="col">Heartbeat</th><th scope="col">Live state age</th><th scope="col">Reaches ingest</th>' +
      '<th scope="col">Requests/min</th><th scope="col">p99</th><th scope="col">Streams</th></tr></thead>' +
      `<tbody>${doc.edges.map((e) => edgeRow(e, nowMs)).join('')}</tbody></table></div>` +
      `<ul class="sources">${doc.edges
        .filter((e) => e.state !== 'operational')
        .map((e) => `<li>${badge(e.state)} <span>${esc(e.node_id)}</span> <small>${esc(e.reason)}</small></li>`)
        .join('')}</ul>`
    : doc.node.role === 'edge'
      ? ''
      : '<p class="empty">No edge has published a heartbeat.</p>';
  return (
    `<h2>Nodes</h2><div ` +
    `class="grid">${renderNode(doc.node, nowMs)}` +
    `</div>${doc.node.role === 'edge' ? '' : `<h3>Edges</h3>${edges}`}`
  );
}

function dayCell(d: ComponentHistory['days'][number]): string {
  const state = d.state ?? 'none';
  const detail =
    d.state === null
      ? 'no data'
      : d.down_s === 0 && d.degraded_s === 0
        ? 'operational'
        : [
            d.down_s ? `down ${formatDuration(d.down_s)}` : '',
            d.degraded_s ? `degraded ${formatDuration(d.degraded_s)}` : '',
          ]
            .filter(Boolean)
            .join(', ');
  return `<td class="day d-${state}" title="${d.date}: ${detail}"><span class="sr">${d.date}: ${detail}</span></td>`;
}

function incidentItem(i: Incident, nowMs: number): string {
  const end =
    i.ended_at === null
      ? '<strong>ongoing</strong>'
      : `lasted ${formatDuration((Date.parse(i.ended_at) - Date.parse(i.started_at)) / 1000)}`;
  const flaps = i.changes > 2 ? ` · ${i.changes} changes` : '';
  return (
    `<li data-component="${esc(i.component)}" data-ongoing="${i.ended_at === null}">${badge(i.state)} ` +
    `<span class="who">${esc(i.name)}</span> <span class="why">${esc(i.reason)}</span> ` +
    `<small>${esc(utc(i.started_at))} (${age(i.started_at, nowMs)}) · ${end}${flaps}</small></li>`
  );
}

export function renderHistory(doc: StatusDocument, nowMs: number): string {
  const h = doc.history;
  const dates = h.components[0]?.days.map((d) => d.date.slice(5)) ?? [];
  const dayHeads = dates.map((d) => `<th scope="col">${d}</th>`).join('');
  const head = `<thead><tr><th scope="col">Component</th>${dayHeads}</tr></thead>`;
  const rows = h.components
    .map((c) => `<tr><th scope="row">${esc(componentName(c.component))}</th>${c.days.map(dayCell).join('')}</tr>`)
    .join('');
  const list = h.incidents.length
    ? `<ul class="incidents">${h.incidents.map((i) => incidentItem(i, nowMs)).join('')}</ul>`
    : `<p class="empty">No incidents in the last ${h.days} days.</p>`;
  const more =
    h.incidents_total > h.incidents.length
      ? `<p class="empty">${h.incidents_total - h.incidents.length} older incidents not listed.</p>`
      : '';
  return (
    `<h2>Last ${h.days} days</h2><div class="table"><table class="days">${head}<tbody>${rows}</tbody></table></div>` +
    '<p class="legend"><span class="key d-operational"></span>operational ' +
    '<span class="key d-degraded"></span>degraded <span class="key d-down"></span>down ' +
    '<span class="key d-none"></span>no data · UTC days</p>' +
    `<h3>Incidents</h3>${list}${more}`
  );
}

export function renderSections(doc: StatusDocument, nowMs: number): Record<SectionId, string> {
  return {
    overall: renderOverall(doc, nowMs),
    feeds: renderFeeds(doc, nowMs),
    alerts: renderAlerts(doc.alerts, nowMs),
    api: renderApi(doc.api, nowMs),
    nodes: renderNodes(doc, nowMs),
    history: renderHistory(doc, nowMs),
  };
}
