// /dashboard through the request chain (inject) and its client script (dashboard/client/, bundled)
// read as text and run in a VM: public and unmetered, a CSP that allows exactly the inlined script
// and style, nothing loaded from elsewhere, data only ever written as text, and the client's pure
// helpers (imported as the modules they are).
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import t, { type Test } from 'tap';
import { RequestHandler } from '../http/request-handler.ts';
import type { KeyAuthenticator } from '../accounts/auth.ts';
import { CursorCodec } from '../http/cursor.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { dashboardRoutes } from './routes.ts';
import { buildSync } from 'esbuild';
import { EXPORT_DATASETS, EXPORT_FORMATS } from '../core/types.ts';
import { MANIFEST_STATES } from '../exports/manifests.ts';
import * as filters from './client/export-filter.ts';
import * as formats from './client/format.ts';
import * as perf from './client/performance-query.ts';
import { MODES } from '../core/types.ts';
import * as scales from './client/scale.ts';
import { dashboardCsp, dashboardScript, renderDashboardPage } from './page.ts';
import { DASHBOARD_STYLE } from './style.ts';
import { buildOpenApi } from '../docs/openapi.ts';
import { silentLogger } from '../test/support/logs.ts';
import { MemoryMeter } from '../test/support/meter.ts';
import type { JsonBody } from '../test/support/json.ts';

/** A client module bundled as the page's script is, its exports on `module` (for a VM with a fake DOM). */
function bundled(entry: string): string {
  const result = buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'module',
    target: 'es2020',
  });
  return result.outputFiles[0]!.text;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

function setup(t: Test) {
  const meter = new MemoryMeter();
  const keys: KeyAuthenticator = { authenticate: () => null, close: () => {} };
  const app = new RequestHandler({
    routes: dashboardRoutes(),
    keys,
    limiter: new SlidingWindowLimiter(),
    meter,
    cursors: new CursorCodec('x'.repeat(32)),
    clock: Date.now,
    log: silentLogger,
    maxBodyBytes: 1024,
    responseCacheEntries: 10,
  });
  t.teardown(() => app.close());
  return { app, meter };
}

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
}

t.test('GET /dashboard: public, unmetered, with the security headers', async (t) => {
  const { app, meter } = setup(t);
  const res = await app.inject({ url: '/dashboard' });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(res.headers['content-security-policy'], dashboardCsp());
  t.equal(res.headers['x-content-type-options'], 'nosniff');
  t.equal(res.headers['referrer-policy'], 'no-referrer');
  t.equal(res.headers['x-frame-options'], 'DENY');
  t.equal(res.headers['cache-control'], 'no-store');
  t.notOk(res.headers['x-meter-unit'], 'not metered');
  t.equal(res.body, renderDashboardPage());
  const head = await app.inject({ url: '/dashboard', method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.body, '');
  t.equal(meter.records.length, 0, 'nothing recorded');
  const api = buildOpenApi(app.routes) as {
    paths: Record<string, Record<string, { security: unknown[]; tags: string[] }>>;
  };
  t.same(api.paths['/dashboard']?.get?.security, [], 'documented as needing no key');
  t.same(api.paths['/dashboard']?.get?.tags, ['Dashboard']);
});

t.test('the CSP allows exactly the inlined script and style', async (t) => {
  const page = renderDashboardPage();
  const scripts = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  t.same(scripts, [dashboardScript()], 'one inline script');
  t.same(styles, [DASHBOARD_STYLE], 'one inline style');
  t.notMatch(
    page,
    /<script[^>]+src=|<link[^>]+stylesheet|\sstyle="|\son[a-z]+="/i,
    'no other script, style or handler attribute',
  );
  const csp = directives(dashboardCsp());
  t.same(csp.get('default-src'), ["'none'"]);
  t.same(csp.get('script-src'), [`'sha256-${sha256(scripts[0]!)}'`]);
  t.same(csp.get('style-src'), [`'sha256-${sha256(styles[0]!)}'`]);
  t.same(csp.get('connect-src'), ["'self'"]);
  t.same(csp.get('img-src'), ["'self'", 'data:']);
  t.same(csp.get('frame-ancestors'), ["'none'"]);
  t.same(csp.get('base-uri'), ["'none'"]);
  t.same(csp.get('form-action'), ["'self'"]);
  t.notMatch(dashboardCsp(), /unsafe|\*|https?:/, 'no wildcard, no unsafe-*, no other origin');
});

t.test('nothing is loaded from elsewhere and the key never goes into a URL or the markup', async (t) => {
  const page = renderDashboardPage();
  const urls = [...page.matchAll(/https?:\/\/[^\s'"<>)]+/g)].map((m) => m[0]);
  t.same([...new Set(urls)], ['http://www.w3.org/2000/svg'], 'the only absolute URL is the SVG namespace name');
  for (const [, attr, value] of page.matchAll(/\s(href|src|action)="([^"]*)"/g)) {
    t.match(value, /^(data:,|[a-z]+)$/, `${attr}="${value}" is relative to this server`);
  }
  const input = /<input id="key"[^>]*>/.exec(page)?.[0] ?? '';
  t.match(input, /type="password"/);
  t.notMatch(input, /\sname=/, 'the key field has no name: a form submission could never carry it');
  t.match(page, /<form id="signin-form" method="post"/, 'and the form would not submit by GET');
  t.notMatch(dashboardScript(), /localStorage|document\.cookie/, 'the key lives in sessionStorage only');
  t.match(dashboardScript(), /Authorization: `Bearer \$\{key\}`/);
  t.notMatch(dashboardScript(), /[?&](api_)?key=/, 'no key in a query string');
});

t.test('the client builds DOM nodes and never parses HTML', async (t) => {
  t.doesNotThrow(() => new vm.Script(dashboardScript()), 'the script compiles');
  for (const sink of [
    'innerHTML',
    'outerHTML',
    'insertAdjacentHTML',
    'document.write',
    'DOMParser',
    'createContextualFragment',
    'eval(',
    'new Function',
    "'style'",
    '"style"',
  ]) {
    t.notOk(dashboardScript().includes(sink), `no ${sink}`);
  }

  // the DOM helper against a recording fake document: strings end up as text, never as markup
  type Node = {
    tag: string;
    attrs: Record<string, string>;
    children: Node[];
    textContent: string;
    listeners: string[];
  };
  const node = (tag: string): Node => ({ tag, attrs: {}, children: [], textContent: '', listeners: [] });
  const document = {
    createElement: (tag: string) =>
      Object.assign(node(tag), {
        setAttribute(this: Node, name: string, value: string) {
          this.attrs[name] = value;
        },
        appendChild(this: Node, child: Node) {
          this.children.push(child);
        },
        addEventListener(this: Node, type: string) {
          this.listeners.push(type);
        },
      }),
    createTextNode: (text: string) => ({ ...node('#text'), textContent: text }),
  };
  const context = vm.createContext({ document });
  const el = vm.runInContext(`${bundled('dashboard/client/dom.ts')}; module.el`, context) as (
    tag: string,
    attrs: unknown,
    children?: unknown,
  ) => Node;
  const hostile = '<img src=x onerror="alert(1)">';
  const cell = el('td', { text: hostile, title: hostile, onclick: () => {} });
  t.equal(cell.textContent, hostile, 'text is assigned as textContent');
  t.equal(cell.attrs.title, hostile, 'attributes are set one by one, as values');
  t.same(cell.listeners, ['click']);
  const para = el('p', null, ['a ', hostile, 7, null]);
  t.same(
    para.children.map((c) => [c.tag, c.textContent]),
    [
      ['#text', 'a '],
      ['#text', hostile],
      ['#text', '7'],
    ],
  );
});

t.test('client helpers: scales, formats, links, problems', async (t) => {
  const base = 'http://127.0.0.1:8080/dashboard';
  const f = {
    ...scales,
    ...formats,
    safeHref: (url: unknown) => formats.safeHref(url, base),
    sameOrigin: (url: unknown) => formats.sameOrigin(url, base),
  } as unknown as Record<string, (...args: JsonBody[]) => JsonBody>;

  t.same(f.axisScale!(0, 1, true), { top: 1, ticks: [0, 1] }, 'an empty chart still has an axis');
  t.same(f.axisScale!(7, 4, true), { top: 8, ticks: [0, 2, 4, 6, 8] });
  t.same(f.axisScale!(9, 4, true), { top: 20, ticks: [0, 5, 10, 15, 20] }, 'no step of 2.5 requests');
  t.same(f.axisScale!(1234, 4, true), { top: 2000, ticks: [0, 500, 1000, 1500, 2000] });
  t.same(f.axisScale!(0.6, 4, false).ticks, [0, 0.2, 0.4, 0.6, 0.8], 'fractional minutes keep fractional steps');
  t.same(f.axisScale!(90, 4, false).ticks, [0, 25, 50, 75, 100]);
  t.equal(f.intervalsFor!(2), 2, 'two requests: two whole intervals');
  t.equal(f.intervalsFor!(500), 4);
  for (const max of [1, 3, 17, 999, 123_456]) {
    const s = f.axisScale!(max, f.intervalsFor!(max), true);
    t.ok(s.top >= max && s.ticks.length === f.intervalsFor!(max) + 1, `${max} fits under ${s.top}`);
  }
  t.equal(f.labelEvery!(60, 42), 1);
  t.equal(f.labelEvery!(20, 42), 3, 'narrow bands: every third date');
  t.equal(f.shortNumber!(15_000), '15k');
  t.equal(f.shortNumber!(2_500_000), '2.5M');

  t.equal(f.fmtBytes!(512), '512 B');
  t.equal(f.fmtBytes!(1536), '1.5 KiB');
  t.equal(f.fmtBytes!(20 * 1024 * 1024), '20 MiB');
  t.equal(f.fmtBytes!(null), '—');
  t.equal(f.fmtSeconds!(45), '45 s');
  t.equal(f.fmtSeconds!(300), '5 min');
  t.equal(f.fmtSeconds!(90), '1 min 30 s');
  t.equal(f.fmtSeconds!(7_260), '2 h 1 min');
  t.equal(f.fmtTime!('2024-05-01T12:34:56.789Z'), '2024-05-01 12:34 UTC');
  t.equal(f.fmtTime!('not a time'), 'not a time');

  t.equal(
    f.safeHref!('/api/v1/history/exports/a.parquet/download?expires=1&signature=x'),
    'http://127.0.0.1:8080/api/v1/history/exports/a.parquet/download?expires=1&signature=x',
  );
  t.equal(f.safeHref!('https://cdn.example/file'), 'https://cdn.example/file', 'a public base URL stays a link');
  for (const bad of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'data:text/html,<script>x</script>',
    'vbscript:x',
    '',
    null,
    42,
  ]) {
    t.equal(f.safeHref!(bad), null, `${String(bad)} is no link`);
  }
  t.equal(
    f.sameOrigin!('/api/v1/history/exports?cursor=abc'),
    'http://127.0.0.1:8080/api/v1/history/exports?cursor=abc',
  );
  t.equal(
    f.sameOrigin!('https://elsewhere.example/api/v1/history/exports'),
    null,
    'the key is never sent to another origin',
  );

  t.equal(
    f.problemText!({ title: 'Forbidden', detail: 'History exports need the Max plan.' }, 403),
    'Forbidden: History exports need the Max plan.',
  );
  t.equal(f.problemText!({ title: 'Unauthorized' }, 401), 'Unauthorized');
  t.equal(f.problemText!(null, 502), 'HTTP 502');
  t.equal(f.problemText!({ message: 'x' }, 500), 'HTTP 500');
});

t.test("the export filters: the API's values, native date inputs, the range checked before any request", async (t) => {
  const form = /<form id="exports-filter"([^>]*)>([\s\S]*?)<\/form>/.exec(renderDashboardPage());
  t.ok(form, 'the filter form is in the page');
  t.match(form?.[1], /\snovalidate\b/, "the page's own messages, not the browser's bubbles");
  t.match(form?.[1], /\shidden\b/, 'hidden until a key with exports signs in');
  const html = form?.[2] ?? '';
  const select = (id: string) =>
    /<select id="([^"]+)">([\s\S]*?)<\/select>/g.exec(html.slice(html.indexOf(`<select id="${id}"`)))?.[2] ?? '';
  const values = (id: string) => [...select(id).matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
  t.same(values('exports-dataset'), ['', ...EXPORT_DATASETS]);
  t.same(values('exports-format'), ['', ...EXPORT_FORMATS]);
  t.same(values('exports-state'), [...MANIFEST_STATES], 'no "any state": the API lists one state at a time');
  t.match(select('exports-state'), /<option value="ready" selected>/, 'ready by default, as the API');
  t.match(html, /<input id="exports-from" type="date"/);
  t.match(html, /<input id="exports-to" type="date"/);
  t.match(html, /<button type="submit" id="exports-apply"/);
  t.notMatch(html, /\sname=/, 'no named field: a submission without the script carries nothing');

  const f = filters as unknown as Record<string, (...args: JsonBody[]) => JsonBody>;
  const { EXPORTS_PAGE_SIZE } = filters;
  const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

  const reversed = f.checkExportFilter!({ state: 'ready', from: '2024-03-11', to: '2024-03-10' });
  t.equal(reversed.field, 'from');
  t.match(reversed.error, 'ends before it starts: "from" (2024-03-11) is after "to" (2024-03-10)');
  t.notOk(reversed.filter, 'no filter to apply');
  t.same(
    plain(f.checkExportFilter!({ dataset: 'alerts', format: '', state: '', from: '2024-03-10', to: '2024-03-10' })),
    { filter: { dataset: 'alerts', format: '', state: 'ready', from: '2024-03-10', to: '2024-03-10' } },
    'one day; state defaults to ready',
  );
  t.same(plain(f.checkExportFilter!({ state: 'failed', to: '2024-03-10' })).filter, {
    dataset: '',
    format: '',
    state: 'failed',
    from: '',
    to: '2024-03-10',
  });
  t.equal(
    f.checkExportFilter!({ state: 'ready', fromBad: true }).field,
    'from',
    'a half-typed date is not taken as no date',
  );
  t.equal(f.checkExportFilter!({ state: 'ready', from: '2024-03-01', toBad: true }).field, 'to');

  const filter = { dataset: 'alerts', format: 'ndjson.gz', state: 'ready', from: '2024-03-01', to: '' };
  t.equal(
    f.exportsPath!(filter),
    `history/exports?limit=${EXPORTS_PAGE_SIZE}&dataset=alerts&format=ndjson.gz&state=ready&from=2024-03-01`,
  );
  t.equal(
    f.exportsPath!({ dataset: '', format: '', state: 'ready', from: '', to: '' }),
    `history/exports?limit=${EXPORTS_PAGE_SIZE}&state=ready`,
  );

  t.equal(f.describeFilter!(filter), 'ready files · alerts · ndjson.gz · service days from 2024-03-01');
  t.equal(
    f.describeFilter!({ ...filter, dataset: '', format: '', from: '2024-03-01', to: '2024-03-09' }),
    'ready files · service days 2024-03-01 to 2024-03-09',
  );
  t.equal(
    f.describeFilter!({ ...filter, state: 'failed', dataset: '', format: '', from: '', to: '2024-03-09' }),
    'failed files · service days up to 2024-03-09',
  );
  t.ok(f.isDefaultFilter!({ dataset: '', format: '', state: 'ready', from: '', to: '' }));
  t.notOk(f.isDefaultFilter!({ dataset: '', format: '', state: 'failed', from: '', to: '' }));
});

t.test(
  "the performance section: closed until opened, the API's values, its choices checked before any request",
  async (t) => {
    const page = renderDashboardPage();
    const section = /<section id="performance"[^>]*>([\s\S]*?)<\/section>/.exec(page)?.[1] ?? '';
    t.match(
      section,
      /^<h2 id="performance-h">Route performance<\/h2>\n<p class="error" role="alert" hidden><\/p>/,
      'its error line',
    );
    const panel = /<details id="performance-panel"([^>]*)>/.exec(section);
    t.ok(panel, 'a panel');
    t.notMatch(panel?.[1], /\sopen\b/, 'closed: nothing metered loads with the page');
    const form = /<form id="performance-form"([^>]*)>([\s\S]*?)<\/form>/.exec(section);
    t.match(form?.[1], /\snovalidate\b/);
    const html = form?.[2] ?? '';
    const values = (id: string) =>
      [
        ...(new RegExp(`<select id="${id}"[^>]*>([\\s\\S]*?)</select>`).exec(html)?.[1] ?? '').matchAll(
          /<option value="([^"]*)"/g,
        ),
      ].map((m) => m[1]);
    t.same(values('performance-mode').sort(), [...MODES].sort(), 'every mode of the API');
    t.same(values('performance-group'), [...perf.PERFORMANCE_GROUPS], 'day and week');
    t.match(html, /<select id="performance-route" disabled/, 'no route until the list loads');
    t.match(html, /<input id="performance-from" type="date"/);
    t.match(html, /<input id="performance-to" type="date"/);
    t.notMatch(html, /\sname=/, 'no named field');

    const f = perf as unknown as Record<string, (...args: JsonBody[]) => JsonBody>;
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x));
    t.same(f.defaultRange!(new Date('2024-05-01T23:59:00Z')), { from: '2024-04-18', to: '2024-05-01' }, '14 days');
    t.same(plain(f.checkPerformanceQuery!({ mode: 'rail', route: '', group: 'day' })), {
      error: 'Pick a line first.',
      field: 'route',
    });
    const reversed = f.checkPerformanceQuery!({ mode: 'bus', route: '39', from: '2024-04-30', to: '2024-04-21' });
    t.equal(reversed.field, 'from');
    t.match(reversed.error, '"from" (2024-04-30) is after "to" (2024-04-21)');
    t.equal(f.checkPerformanceQuery!({ route: '39', toBad: true }).field, 'to', 'a half-typed date is no date');
    const q = f.checkPerformanceQuery!({
      mode: 'streetcar',
      route: 'E/1 x',
      group: 'week',
      from: '2024-04-20',
      to: '',
    }).query;
    t.same(plain(q), { mode: 'streetcar', route: 'E/1 x', group: 'week', from: '2024-04-20', to: '' });
    t.equal(
      f.performancePath!(q),
      'streetcar/E%2F1%20x/performance?group=week&from=2024-04-20',
      'the id is one segment',
    );
    t.equal(
      f.performancePath!({ ...q, to: '2024-05-01' }, 'period'),
      'streetcar/E%2F1%20x/performance?group=period&from=2024-04-20&to=2024-05-01',
    );
    t.equal(f.checkPerformanceQuery!({ mode: 'ferry', route: '1' }).query.mode, 'bus', 'an unknown mode is not sent');

    const window = { from: '2024-04-20', to: '2024-05-01' };
    t.same(
      f.retainedWindowOf!({ code: 'outside_retention', retained_window: { ...window, finalized_through: null } }),
      window,
    );
    t.equal(f.retainedWindowOf!({ code: 'not_found', retained_window: window }), null, 'only that problem');
    t.equal(f.retainedWindowOf!(null), null);
    t.same(
      f.fitRange!({ from: '2026-01-01', to: '2026-01-14' }, window),
      window,
      'after the window: its end, as long as fits',
    );
    t.same(
      f.fitRange!({ from: '2024-04-01', to: '2024-04-14' }, window),
      { from: '2024-04-20', to: '2024-04-20' },
      'before it',
    );
    t.same(
      f.fitRange!({ from: '2024-04-18', to: '2024-04-25' }, { from: '2024-04-01', to: '2024-04-22' }),
      { from: '2024-04-15', to: '2024-04-22' },
      'the length is kept when the window allows',
    );

    const notes = [
      'on_time_pct, early_pct, late_pct: 6 arrival delays, fewer than the 10 needed (performance.min_observations)',
      'prediction_accuracy 3-6: fewer than 10 predictions judged',
    ];
    t.same(f.notesFor!(notes, ['early_pct']), [notes[0]], "the notes naming the chart's figures");
    t.same(f.notesFor!(notes, ['prediction_accuracy']), [notes[1]]);
    t.same(f.notesFor!(notes, ['median_dwell_s']), notes, 'all of them when none names one');
    t.same(f.routeChoice!({ line: 'Red', short_name: null, long_name: 'Red Line' }), {
      id: 'Red',
      label: 'Red · Red Line',
    });
    t.same(f.routeChoice!({ route_id: '741', short_name: 'SL1', long_name: null }), { id: '741', label: 'SL1 (741)' });
    t.equal(f.routeChoice!({ short_name: 'x', long_name: null }), null, 'no id: no choice');
  },
);
