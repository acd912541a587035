// The developer dashboard in headless Chromium against the real server: account, usage, webhook
// and export routes on one DuckDB file, a service day of history exported for real, a webhook
// endpoint receiving the export.ready events. A Max key sees its plan, the usage chart, the
// endpoint and its deliveries, downloads export files whose bytes are checked against the
// manifest and read back by the independent readers, and filters the export list (one request
// per Apply). A Free key gets the plan explanation and a rate-limit problem; a bad or revoked key
// ends up signed out. Screenshots go to test-artifacts/.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { listManifests, runExport, type ExportManifest } from '../exports/index.ts';
import { DAY, LATER, NEXT_DAY, TZ, readNdjsonGz, readParquetFile, seedDay } from './support/exports.ts';
import type { Api } from '../app/api.ts';
import { createKey, revokeKey } from '../accounts/keys.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import type { Meter } from '../accounts/meter.ts';
import { accountRoutes } from '../http/routes/account.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { exportRoutes } from '../http/routes/exports.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import { createWebhooks, type Webhooks } from '../webhooks/index.ts';
import { startReceiver } from './support/webhooks.ts';
import { chromiumSkip, launchChromium, newWatch, watchPage, type PageWatch } from './support/browser.ts';
import { bearer, startHarness, type Harness } from './support/harness.ts';

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');
const DAY_MS = 86_400_000;
const HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">';
const HOSTILE_DESCRIPTION = '<script>window.__pwned=2</script> & "ops"';

interface Setup {
  h: Harness;
  webhooks: Webhooks;
  manifests: ExportManifest[];
  exportsDir: string;
  max: { key: string; id: string };
  /** metered requests of the Max key per UTC day, made before the page opens */
  made: Map<string, { requests: number; errors: number; minutes: number }>;
  endpointId: string;
}

async function setup(t: Test): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), 'dashboard-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const exportsDir = join(root, 'exports');
  const bus = new InMemoryEventBus();
  const limiter = new SlidingWindowLimiter();
  const made: { webhooks?: Webhooks; api?: Api } = {};
  // the API's own meter, as the composition root passes it: the usage read flushes it first
  const meter: Meter = {
    record: (usage) => made.api!.meter.record(usage),
    flush: () => made.api!.meter.flush(),
    close: () => made.api!.meter.close(),
  };
  const h = await startHarness({
    dbPath: join(root, 'transit.duckdb'),
    limiter,
    config: { webhooks: { allow_private_targets: true }, api: { key_recheck_ms: 100 } },
    routes: ({ db, config }) => {
      made.webhooks = createWebhooks({
        db,
        bus,
        config,
        stopGraceMs: 200,
        onError: (err) => t.fail(`webhooks: ${String(err)}`),
      });
      return [
        ...accountRoutes({ db, limiter, meter }),
        ...webhookRoutes(made.webhooks),
        ...exportRoutes({ db, dir: exportsDir, secret: config.signing_secret!, ttlS: 3_600 }),
        ...dashboardRoutes(),
      ];
    },
  });
  made.api = h.api;
  const webhooks = made.webhooks!;
  await webhooks.start();
  const receiver = await startReceiver();
  t.teardown(async () => {
    await webhooks.stop();
    await receiver.close();
    await h.close();
  });

  const created = await createKey(h.db, { plan: 'max', name: HOSTILE_NAME });
  const auth = bearer(created.key);
  const usage = new Map<string, { requests: number; errors: number; minutes: number }>();
  const count = (status: number) => {
    const date = new Date(h.clock.now).toISOString().slice(0, 10);
    const day = usage.get(date) ?? { requests: 0, errors: 0, minutes: 0 };
    usage.set(date, { ...day, requests: day.requests + 1, errors: day.errors + (status >= 400 ? 1 : 0) });
  };
  const get = async (path: string) => {
    const res = await h.get(path, auth);
    await res.arrayBuffer();
    count(res.status);
  };
  // traffic on three days: 3 days ago, yesterday, and today (the harness clock's day)
  const today = h.clock.now;
  for (const [daysAgo, calls] of [
    [3, 2],
    [1, 4],
  ] as const) {
    h.clock.now = today - daysAgo * DAY_MS;
    for (let i = 0; i < calls; i++) await get('/api/v1/alerts');
  }
  h.clock.now = today;
  await get('/api/v1/alerts');
  await get('/api/v1/alerts/no-such-alert');
  // connection-minutes as the streaming layer records them
  for (const [daysAgo, minutes] of [
    [2, 12],
    [0, 7],
  ] as const) {
    const atMs = today - daysAgo * DAY_MS;
    h.api.meter.record({
      keyId: created.id,
      plan: 'max',
      test: false,
      unit: 'connection-minute',
      quantity: minutes,
      method: 'GET',
      endpoint: '/api/v1/events/stream',
      status: 200,
      latencyMs: 0,
      atMs,
      requestId: `stream-${daysAgo}`,
    });
    const date = new Date(atMs).toISOString().slice(0, 10);
    const day = usage.get(date) ?? { requests: 0, errors: 0, minutes: 0 };
    usage.set(date, { ...day, minutes: day.minutes + minutes });
  }

  const registered = await fetch(`${h.url}/api/v1/webhooks/endpoints`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${receiver.url}/hooks`,
      description: HOSTILE_DESCRIPTION,
      filters: { event_types: ['export.ready'] },
    }),
  });
  t.equal(registered.status, 201, 'webhook endpoint registered');
  count(registered.status);
  const endpointId = ((await registered.json()) as { id: string }).id;

  await seedDay(h.db);
  const summary = await runExport(h.db, {
    dataset: ['reliability', 'alerts'],
    from: DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => LATER,
    bus,
  });
  const manifests = summary.files.flatMap((f) => (f.outcome === 'ready' && f.manifest ? [f.manifest] : []));
  t.equal(manifests.length, 4, 'reliability and alerts of one day, Parquet and NDJSON');
  await receiver.waitFor(manifests.length);
  await webhooks.drain();
  return { h, webhooks, manifests, exportsDir, max: { key: created.key, id: created.id }, made: usage, endpointId };
}

async function openPage(
  browser: Browser,
  url: string,
  watch: PageWatch,
  viewport = { width: 1280, height: 900 },
): Promise<Page> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  // Chromium logs every 4xx fetch; the refused and rate-limited calls below are deliberate
  watchPage(page, url, watch, {
    ignoreConsole: /^Failed to load resource: the server responded with a status of (401|429) /,
  });
  const response = await page.goto(`${url}/dashboard`);
  if (response?.status() !== 200) throw new Error(`/dashboard answered ${response?.status()}`);
  return page;
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.fill('#key', key);
  await page.click('#signin-button');
}

const storedKey = (page: Page) => page.evaluate(() => sessionStorage.getItem('transit-api.dashboard.key'));

t.test('the developer dashboard in headless Chromium', { skip: chromiumSkip }, async (t) => {
  const s = await setup(t);
  const { h } = s;
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const watch = newWatch();
  mkdirSync(ARTIFACTS, { recursive: true });
  const page = await openPage(browser, h.url, watch);
  t.ok(await page.locator('#signin').isVisible(), 'the sign-in form comes first');
  t.notOk(await page.locator('#app').isVisible(), 'no data before sign-in');
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-signin.png') });

  await t.test('a Max key: plan, limits, window', async (t) => {
    await signIn(page, s.max.key);
    await page.waitForSelector('#plan-body .plan[data-plan="max"]');
    t.equal(
      await page
        .locator('#plan-body .plan')
        .innerText()
        .then((x) => x.toLowerCase()),
      'max',
    );
    const facts = await page.locator('#plan-body dl.facts').innerText();
    t.match(facts, /Requests\s+6,000 requests per 5 min/);
    t.match(facts, /Event streams\s+25 open at a time/);
    t.match(facts, /Page size\s+up to 1,000 items/);
    t.match(facts, /Webhook endpoints\s+up to 100/);
    t.match(facts, /History exports\s+included/);
    t.match(await page.locator('#window-body').innerText(), /of 6,000 requests left in this window/);
    t.equal(await storedKey(page), s.max.key, 'the key is in sessionStorage');
    t.equal(await page.inputValue('#key'), '', 'and no longer in the form');
    t.match(await page.locator('#who').innerText(), HOSTILE_NAME, 'the key name is shown as text');
  });

  await t.test('the usage chart: bars and points for 14 days, the requests made before', async (t) => {
    // the oldest days have no requests: their bars have no height, so wait for presence
    await page.waitForSelector('#usage-chart svg g.day', { state: 'attached' });
    const days = await page.locator('#usage-chart svg g.day').evaluateAll((groups) =>
      groups.map((g) => ({
        date: g.getAttribute('data-date')!,
        requests: Number(g.getAttribute('data-requests')),
        errors: Number(g.getAttribute('data-errors')),
        barHeight: Number(g.querySelector('rect.bar')?.getAttribute('height')),
      })),
    );
    const points = await page.locator('#usage-chart svg circle.point').evaluateAll((cs) =>
      cs.map((c) => ({
        date: c.getAttribute('data-date')!,
        minutes: Number(c.getAttribute('data-minutes')),
        cy: Number(c.getAttribute('cy')),
      })),
    );
    t.equal(days.length, 14, 'one bar per day');
    t.equal(points.length, 14, 'one point per day');
    t.equal(days.at(-1)!.date, new Date(h.clock.now).toISOString().slice(0, 10), 'ending today (UTC)');
    for (const d of days) {
      const before = s.made.get(d.date) ?? { requests: 0, errors: 0, minutes: 0 };
      if (d.date === days.at(-1)!.date) {
        // today also holds the page's own metered calls, made while the usage was read
        t.ok(
          d.requests >= before.requests && d.errors >= before.errors,
          `today: at least the ${before.requests} requests made before`,
        );
      } else {
        t.same(
          { requests: d.requests, errors: d.errors },
          { requests: before.requests, errors: before.errors },
          `${d.date}: as made`,
        );
      }
      t.equal(d.barHeight > 0, d.requests > 0, `${d.date}: a visible bar exactly when there were requests`);
    }
    t.same(
      points.map((p) => p.minutes),
      days.map((d) => s.made.get(d.date)?.minutes ?? 0),
      'connection-minutes per day',
    );
    const peak = points.reduce((a, b) => (b.minutes > a.minutes ? b : a));
    t.ok(
      points.every((p) => p.cy >= peak.cy),
      'the busiest streaming day is the highest point',
    );
    t.match(await page.locator('#usage-chart svg title#usage-chart-title').textContent(), /API usage per day \(UTC\)/);
    t.match(
      await page.locator('#usage-chart svg desc').textContent(),
      /Totals: \d+ requests, \d+ errors, 19 connection-minutes/,
    );
    t.match(await page.locator('#usage-legend').innerText(), /Requests[\s\S]*Connection-minutes/);
    t.equal(await page.locator('#usage-table tbody tr').count(), 14, 'the table fallback lists every day');
  });

  await t.test('webhook endpoints and deliveries, escaped', async (t) => {
    const row = page.locator(`#endpoints-body tr[data-endpoint="${s.endpointId}"]`);
    await row.waitFor();
    t.match(await row.innerText(), /\/hooks[\s\S]*export\.ready[\s\S]*enabled/);
    t.equal(await row.locator('.desc').textContent(), HOSTILE_DESCRIPTION, 'the description is text, not markup');
    const delivered = page.locator('#deliveries-body tr[data-state="succeeded"]');
    t.equal(await delivered.count(), s.manifests.length, 'one succeeded delivery per export.ready event');
    t.match(await delivered.first().innerText(), /export\.ready/);
    t.equal(
      await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      undefined,
      'nothing injected ran',
    );
    t.equal(await page.locator('#app img, #app script').count(), 0, 'no element came from data');
  });

  await t.test('export files: download buttons, bytes as the manifest says', async (t) => {
    await page.waitForSelector('#exports-body tr[data-export]');
    t.equal(await page.locator('#exports-body tr[data-export]').count(), s.manifests.length);
    for (const format of ['parquet', 'ndjson.gz'] as const) {
      const m = s.manifests.find((x) => x.format === format && x.dataset === 'reliability')!;
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click(`#exports-body a.download[data-id="${m.id}"]`),
      ]);
      t.equal(download.suggestedFilename(), m.id, `${m.id}: the file name`);
      const path = join(mkdtempSync(join(tmpdir(), 'dashboard-download-')), m.id);
      t.teardown(() => rmSync(dirname(path), { recursive: true, force: true }));
      await download.saveAs(path);
      const bytes = readFileSync(path);
      t.equal(bytes.length, m.bytes, `${m.id}: byte count as the manifest says`);
      t.equal(createHash('sha256').update(bytes).digest('hex'), m.sha256, `${m.id}: sha256 as the manifest says`);
      const rows = format === 'parquet' ? readParquetFile(path).numRows : readNdjsonGz(path).lines.length;
      t.equal(rows, m.rows, `${m.id}: ${rows} rows read back independently, as the manifest says`);
    }
    const stored = (await listManifests(h.db, { limit: 100, state: 'ready' })).items;
    t.same(stored.map((m) => m.sha256).sort(), s.manifests.map((m) => m.sha256).sort(), 'the manifests did not change');
  });

  await t.test('export filters: dataset and format, a failed file, a service-day range, more pages', async (t) => {
    const listed = () =>
      page.locator('#exports-body tr[data-export]').evaluateAll((trs) =>
        trs.map((tr) => ({
          id: tr.getAttribute('data-export')!,
          state: tr.getAttribute('data-state'),
          dataset: tr.getAttribute('data-dataset'),
          format: tr.getAttribute('data-format'),
        })),
      );
    const fillForm = async (f: Partial<Record<'dataset' | 'format' | 'state' | 'from' | 'to', string>>) => {
      for (const name of ['dataset', 'format', 'state'] as const)
        if (f[name] !== undefined) await page.selectOption(`#exports-${name}`, f[name]!);
      for (const name of ['from', 'to'] as const)
        if (f[name] !== undefined) await page.fill(`#exports-${name}`, f[name]!);
    };
    /** clicks and waits for the list request, then for the rows; the request's query */
    const submit = async (button: string) => {
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url().includes('/api/v1/history/exports?')),
        page.click(button),
      ]);
      await page.waitForSelector('#exports[aria-busy="false"]', { state: 'attached' });
      return new URL(res.url()).searchParams;
    };

    await fillForm({ dataset: 'alerts', format: 'ndjson.gz' });
    let query = await submit('#exports-apply');
    t.same(
      [query.get('dataset'), query.get('format'), query.get('state')],
      ['alerts', 'ndjson.gz', 'ready'],
      'the filters are sent',
    );
    const alertsNdjson = s.manifests.find((m) => m.dataset === 'alerts' && m.format === 'ndjson.gz')!;
    t.same(
      await listed(),
      [{ id: alertsNdjson.id, state: 'ready', dataset: 'alerts', format: 'ndjson.gz' }],
      'only the matching file',
    );
    t.match(await page.locator('#exports-summary').innerText(), /^1 shown · ready files · alerts · ndjson\.gz$/);

    const broken = s.manifests.find((m) => m.dataset === 'reliability' && m.format === 'parquet')!;
    await h.db.run("UPDATE export_manifests SET state = 'failed', error = 'disk full' WHERE manifest_id = $id", {
      id: broken.id,
    });
    await fillForm({ dataset: '', format: '', state: 'failed' });
    await submit('#exports-apply');
    t.same(
      (await listed()).map((r) => [r.id, r.state]),
      [[broken.id, 'failed']],
      'only the failed file',
    );
    const failedRow = page.locator(`#exports-body tr[data-export="${broken.id}"]`);
    t.same(
      [await failedRow.locator('.failure').innerText(), await failedRow.locator('a, button').count()],
      ['disk full', 0],
      'its error is shown, and no download button',
    );
    await page.locator('#exports').screenshot({ path: join(ARTIFACTS, 'dashboard-exports-failed.png') });

    await fillForm({ state: 'ready', from: NEXT_DAY, to: DAY });
    const calls = () => watch.urls.filter((u) => u.includes('/api/v1/history/exports?')).length;
    const before = calls();
    await page.click('#exports-apply');
    const error = page.locator('#exports-filter-error');
    await error.waitFor({ state: 'visible' });
    t.match(await error.innerText(), `"from" (${NEXT_DAY}) is after "to" (${DAY})`, "the page's own message");
    t.same(
      [await page.getAttribute('#exports-from', 'aria-invalid'), await page.locator('#exports > .error').isVisible()],
      ['true', false],
      'the field is marked; no API problem, since nothing was asked',
    );
    await fillForm({ from: DAY });
    query = await submit('#exports-apply');
    t.equal(calls(), before + 1, 'the invalid range made no request, the corrected one made one');
    t.same(
      [query.get('from'), query.get('to'), await error.isVisible()],
      [DAY, DAY, false],
      'sent; the message is gone',
    );
    t.equal((await listed()).length, s.manifests.length - 1, 'the ready files of the day');
    await fillForm({ from: NEXT_DAY, to: '' });
    await submit('#exports-apply');
    t.match(await page.locator('#exports-body').innerText(), /No export file matches these filters/);

    // 30 days of queued realtime files, both parts and formats: 60 Parquet ones, more than a page
    await h.db.run(`INSERT INTO export_manifests (manifest_id, dataset, part, service_date, format, state, file_path,
      attempts, queued_at, updated_at)
      SELECT 'realtime-' || part || '-' || strftime(d, '%Y-%m-%d') || '.' || fmt, 'realtime', part, d::DATE,
        fmt, 'pending',
        'realtime/' || part || '-' || strftime(d, '%Y-%m-%d') || '.' || fmt, 0, now(), now()
      FROM range(DATE '2024-02-01', DATE '2024-03-02', INTERVAL 1 DAY) t(d), (VALUES ('arrivals'),
        ('vehicle_positions')) p(part),
        (VALUES ('parquet'), ('ndjson.gz')) f(fmt)`);
    await fillForm({ dataset: 'realtime', format: 'parquet', state: 'pending', from: '' });
    await submit('#exports-apply');
    t.equal((await listed()).length, 50, 'one page');
    t.ok(await page.locator('#exports-more').isVisible(), 'with more to load');
    query = await submit('#exports-more');
    t.same(
      [query.has('cursor'), query.get('dataset'), query.get('format'), query.get('state')],
      [true, 'realtime', 'parquet', 'pending'],
      'the next page follows the cursor, with the filters',
    );
    const all = await listed();
    t.equal(new Set(all.map((r) => r.id)).size, 60, 'every queued Parquet file once');
    t.ok(
      all.every((r) => r.dataset === 'realtime' && r.format === 'parquet' && r.state === 'pending'),
      'and nothing else',
    );
    t.notOk(await page.locator('#exports-more').isVisible(), 'no further page');

    await submit('#exports-clear');
    t.equal(await page.inputValue('#exports-state'), 'ready', 'Clear returns to the defaults');
    t.equal((await listed()).length, s.manifests.length - 1);
  });

  await t.test('screenshots, a phone, a reload, sign out', async (t) => {
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => Number(document.querySelector('#usage-chart svg')?.getAttribute('width')) <= 390);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    t.ok(width <= 390, `no horizontal scrolling on a phone (content ${width} px wide)`);
    const button = await page.locator('#exports-body a.download').first().boundingBox();
    t.ok(button && button.x >= 0 && button.x + button.width <= 390, 'the download buttons fit on a phone screen', {
      button,
    });
    for (const control of ['#exports-to', '#exports-apply']) {
      const box = await page.locator(control).boundingBox();
      t.ok(box && box.x >= 0 && box.x + box.width <= 390, `${control} fits on a phone screen`, { box });
    }
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.reload();
    await page.waitForSelector('#plan-body .plan[data-plan="max"]');
    t.pass('a reload keeps the session (sessionStorage)');
    await page.click('#signout');
    t.ok(await page.locator('#signin').isVisible());
    t.notOk(await page.locator('#app').isVisible());
    t.equal(await storedKey(page), null, 'sign out removes the key');
    t.equal(await page.locator('#plan-body').innerHTML(), '', 'and the data');
    t.match(await page.locator('#notice').innerText(), /Signed out/);
  });

  await t.test('a Free key: exports explained, no export call, a 429 shown', async (t) => {
    const free = await createKey(h.db, { plan: 'free', name: 'free' });
    const before = watch.urls.length;
    await signIn(page, free.key);
    await page.waitForSelector('#exports-body [data-reason="plan"]');
    t.match(await page.locator('#exports-body').innerText(), /part of the Max plan; this key is on the free plan/);
    await page.waitForSelector('#endpoints-body p.empty');
    t.notOk(
      watch.urls.slice(before).some((u) => u.includes('/history/exports')),
      'the exports endpoint is not called',
    );
    t.notOk(await page.locator('#exports-filter').isVisible(), 'and no filters are offered');
    // spend the rest of the Free window (20 metered requests per 5 minutes)
    let status = 0;
    for (let i = 0; i < 25 && status !== 429; i++) {
      const res = await h.get('/api/v1/alerts', bearer(free.key));
      status = res.status;
      await res.arrayBuffer();
    }
    t.equal(status, 429, 'the window is spent');
    await page.click('#refresh');
    const error = page.locator('#webhooks .error');
    await error.waitFor({ state: 'visible' });
    t.match(await error.innerText(), /Too many requests|rate/i, 'the problem is shown');
    t.match(await error.innerText(), /Retry in \d/);
    t.match(await page.locator('#window-body').innerText(), /^0 of 20 requests left/, 'the window shows it');
    t.ok(await page.locator('#app').isVisible(), 'a 429 does not sign out');
    await page.click('#signout');
  });

  await t.test('a bad key is refused; a revoked key signs out', async (t) => {
    await signIn(page, `tk_live_${'x'.repeat(32)}`);
    const error = page.locator('#signin-error');
    await error.waitFor({ state: 'visible' });
    t.match(await error.innerText(), /This key was refused\. Unauthorized/);
    t.notOk(await page.locator('#app').isVisible(), 'stays signed out');
    t.equal(await storedKey(page), null, 'nothing stored');

    const doomed = await createKey(h.db, { plan: 'regular', name: 'doomed' });
    await signIn(page, doomed.key);
    await page.waitForSelector('#plan-body .plan[data-plan="regular"]');
    t.notOk(await error.isVisible(), 'the earlier error is gone');
    await revokeKey(h.db, doomed.id);
    await new Promise((r) => setTimeout(r, 300)); // past the key cache's recheck interval
    await page.click('#refresh');
    await page.waitForSelector('#signin:not([hidden])');
    t.match(await page.locator('#notice').innerText(), /Signed out: the server refused this key/);
    t.equal(await storedKey(page), null);
  });

  t.same(watch.consoleErrors, [], 'no console errors (no CSP violation)');
  t.same(watch.foreign, [], 'no request leaves the server');
  t.notOk(
    watch.urls.some((u) => /tk_(live|test)_/.test(u)),
    'no key in any URL',
  );
});
