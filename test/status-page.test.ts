// The status page in headless Chromium against the real service on the demo network: generated
// city → GTFS-RT simulator → pipeline polling every 1–2 s → startService. The open page must show
// every component, turn a feed down when the simulator stops it and back when it returns, with no
// reload; /status.json must match the served OpenAPI document; the page must work at 390×844
// without console errors; and it must answer while DuckDB's queue is held. Screenshots go to
// test-artifacts/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import t from 'tap';
import { chromiumSkip, launchChromium, newWatch, watchPage } from './support/browser.ts';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { DEMO_SCHEDULE_ID } from '../fixtures/demo-config.ts';
import { generateDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { createKey } from '../accounts/keys.ts';
import { OpenApiValidator } from './support/openapi-validator.ts';
import { logInto } from './support/logs.ts';

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');
const FEEDS = ['demo-vehicles', 'demo-trip-updates', 'demo-alerts', 'demo-notices'];

const card = (component: string) => `article.card[data-component="${component}"]`;
async function waitForState(page: Page, component: string, state: string, timeout = 15_000): Promise<void> {
  await page.waitForSelector(`${card(component)}[data-state="${state}"]`, { timeout });
}

t.test('the status page follows the demo network live', { skip: chromiumSkip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'status-page-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const network = generateDemoNetwork(join(dir, 'network'));
  const sim = await startSimulator({ network, host: '127.0.0.1', port: 0, badBodyEvery: 0 });
  t.teardown(() => sim.stop());
  const feed = (id: string, kind: 'gtfs-rt' | 'alerts-json', url: string, interval_s: number) => ({
    id,
    kind,
    url,
    interval_s,
    timeout_s: interval_s * 0.8,
    backoff_max_s: interval_s,
    schedule_id: DEMO_SCHEDULE_ID,
  });
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'status.duckdb'),
    feeds: [
      feed('demo-vehicles', 'gtfs-rt', sim.feeds.vehicles, 1),
      feed('demo-trip-updates', 'gtfs-rt', sim.feeds.tripUpdates, 2),
      feed('demo-alerts', 'gtfs-rt', sim.feeds.alerts, 2),
      feed('demo-notices', 'alerts-json', sim.feeds.alertsJson, 2),
    ],
    schedules: [{ id: DEMO_SCHEDULE_ID, source: sim.scheduleSource }],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    status: { tick_ms: 250 },
  });
  const logs: string[] = [];
  const service = await startService(config, {
    log: logInto((message, line) => logs.push(`${String(line.component)}: ${message}`)),
  });
  t.teardown(() => service.close());
  const { url } = service;

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const watch = watchPage(page, url, newWatch());
  const { consoleErrors, foreign } = watch;
  mkdirSync(ARTIFACTS, { recursive: true });

  const response = await page.goto(`${url}/status`);
  t.equal(response?.status(), 200);
  for (const id of FEEDS) t.equal(await page.locator(card(`feed:${id}`)).count(), 1, `feed ${id} has a card`);
  t.equal(await page.locator(card('alerts')).count(), 1, 'alert ingestion has a card');
  t.equal(await page.locator(card('api')).count(), 1, 'the public API has a card');
  t.ok(await page.locator('#history table.days').isVisible(), 'the 7-day history is shown');
  await page.waitForSelector('#live.on', { timeout: 10_000 });
  for (const id of FEEDS) await waitForState(page, `feed:${id}`, 'operational');
  await waitForState(page, 'alerts', 'operational');

  // some API traffic for the figures
  const { key } = await createKey(service.runtime.db, { plan: 'max', name: 'status-test' });
  for (let i = 0; i < 5; i++) await fetch(`${url}/api/v1/alerts`, { headers: { authorization: `Bearer ${key}` } });
  await fetch(`${url}/api/v1/alerts`, { headers: { authorization: 'Bearer tk_live_wrong' } });
  await page.waitForFunction(
    () =>
      /\d/.test(document.querySelector('#api tbody td')?.textContent ?? '') &&
      document.querySelector('#api tbody td')?.textContent !== '0',
    undefined,
    { timeout: 5_000 },
  );
  const vehicles = page.locator(card('feed:demo-vehicles'));
  t.match(
    await vehicles.locator('dl.facts').innerText(),
    /Last successful poll[\s\S]*Header timestamp age[\s\S]*Freshness\s+fresh[\s\S]*Entities in last poll\s+\d/,
  );
  t.equal(await vehicles.locator('svg rect').count(), 60, 'a sparkline of 60 minutes');
  t.match(
    await page.locator(card('alerts')).innerText(),
    /rail[\s\S]*bus[\s\S]*streetcar[\s\S]*Sources[\s\S]*demo-notices/,
  );
  t.match(
    await page.locator(card('api')).innerText(),
    /Last 5 min[\s\S]*Last 60 min[\s\S]*Open event streams[\s\S]*Webhook outbox/,
  );
  await page.screenshot({ path: join(ARTIFACTS, 'status.png'), fullPage: true });

  // the simulator stops answering the vehicles feed and fails the notices feed
  await page.evaluate(() => {
    (window as unknown as { marker: number }).marker = 42;
  });
  const stoppedAt = Date.now();
  sim.setFeedDown('vehicles', 'timeout');
  sim.setFeedDown('alertsJson', 'error500');
  await waitForState(page, 'feed:demo-vehicles', 'down');
  t.comment(
    `vehicles (1 s interval, polls time out) shown down ${Date.now() - stoppedAt} ms after the simulator stopped`,
  );
  await waitForState(page, 'feed:demo-notices', 'down');
  await waitForState(page, 'alerts', 'degraded');
  t.match(await vehicles.locator('.reason').innerText(), /no successful poll for \d+ s|polls failed in a row/);
  t.equal(await page.getAttribute('#overall .banner', 'data-state'), 'down');
  t.equal(
    await page.evaluate(() => (window as unknown as { marker?: number }).marker),
    42,
    'the same page, never reloaded',
  );
  await page.screenshot({ path: join(ARTIFACTS, 'status-down.png'), fullPage: true });

  sim.setFeedDown('vehicles', 'ok');
  sim.setFeedDown('alertsJson', 'ok');
  await waitForState(page, 'feed:demo-vehicles', 'operational');
  await waitForState(page, 'feed:demo-notices', 'operational');
  await waitForState(page, 'alerts', 'operational');
  await page.waitForSelector('#history li[data-component="feed:demo-vehicles"][data-ongoing="false"]', {
    timeout: 5_000,
  });
  t.match(
    await page.locator(card('feed:demo-notices')).locator('dl.facts').innerText(),
    /Last error\s+HTTP 500/,
    'the last error stays visible',
  );
  t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42);
  await page.screenshot({ path: join(ARTIFACTS, 'status-recovered.png'), fullPage: true });

  // /status.json against the OpenAPI document the server generates from its route table
  const validator = new OpenApiValidator(
    (await (await fetch(`${url}/openapi.json`)).json()) as Record<string, unknown>,
  );
  const json = await fetch(`${url}/status.json`);
  const text = await json.text();
  const checked = validator.check('GET', '/status.json', json.status, json.headers, text);
  t.same(checked.errors, [], '/status.json matches the OpenAPI document');
  const doc = JSON.parse(text) as {
    feeds: Array<{ feed_id: string; failures_1h: number }>;
    api: { last_5m: { requests: number; client_errors: number } };
    history: { incidents: Array<{ component: string }> };
  };
  t.same(
    doc.feeds.map((f) => f.feed_id),
    FEEDS,
  );
  t.ok(doc.feeds[0]!.failures_1h > 0, 'the outage is in the hour figures');
  t.ok(doc.api.last_5m.requests >= 6 && doc.api.last_5m.client_errors >= 1);
  t.ok(doc.history.incidents.some((i) => i.component === 'feed:demo-vehicles'));
  const rows = await service.runtime.db.all<{ n: number }>(
    `SELECT count(*)::INTEGER AS n FROM status_changes WHERE component = 'feed:demo-vehicles' AND state = 'down'`,
  );
  t.ok(rows[0]!.n >= 1, 'the state change is stored in DuckDB');

  // DuckDB's shared queue held: the page and the document still answer, from memory
  let released = false;
  const hold = service.runtime.db.exclusive(async () => {
    await new Promise((r) => setTimeout(r, 1_500));
    released = true;
  });
  const busy = await Promise.all([fetch(`${url}/status`), fetch(`${url}/status.json`)]);
  t.same(
    busy.map((r) => r.status),
    [200, 200],
  );
  t.notOk(released, 'answered while the database queue was held');
  await hold;

  // a phone
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  watchPage(phone, url, watch, { label: 'phone: ' });
  await phone.goto(`${url}/status`);
  await phone.waitForSelector('#live.on', { timeout: 10_000 });
  const width = await phone.evaluate(() => document.documentElement.scrollWidth);
  t.ok(width <= 390, `no horizontal scrolling on a phone (content ${width} px wide)`);
  await phone.screenshot({ path: join(ARTIFACTS, 'status-phone.png') });
  await phone.screenshot({ path: join(ARTIFACTS, 'status-phone-full.png'), fullPage: true });

  t.same(consoleErrors, [], 'no console errors');
  t.same(foreign, [], 'no request leaves the server');
  t.ok(existsSync(join(ARTIFACTS, 'status-down.png')) && existsSync(join(ARTIFACTS, 'status-phone.png')));
  t.notOk(
    logs.some((l) => /^status:/.test(l)),
    'the status collector logged no error',
  );
});
