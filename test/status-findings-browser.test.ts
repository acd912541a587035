// The status page shows each feed's rule findings, live, in headless Chromium: a file:// feed the
// test rewrites gives two vehicles one id (E052) and one without a timestamp (W001): the card
// lists both with an entity id and the feed stays operational; then a snapshot older than the one
// before (E018, a rule that makes the data unusable) turns it degraded, and a clean one back,
// without a reload. /status.json carries the same list and matches the OpenAPI document.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { chromiumSkip, launchChromium, newWatch, watchPage } from './support/browser.ts';
import { silentLogger } from '../core/logger.ts';
import { OpenApiValidator } from './support/openapi-validator.ts';
import { encodeFeed } from './support/pipeline-fakes.ts';

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');
const card = '#feeds article.card[data-component="feed:buses"]';

/** Three buses; `duplicate`: the third carries the second's vehicle id; the first has no timestamp. */
function snapshot(headerS: number, duplicate: boolean): Uint8Array {
  const bus = (i: number, id: string, timestamp: boolean) => ({
    id: `e${i}`,
    vehicle: {
      vehicle: { id },
      position: { latitude: 42.35 + i / 1000, longitude: -71.06 },
      ...(timestamp ? { timestamp: headerS - 3 } : {}),
    },
  });
  return encodeFeed({
    header: { gtfs_realtime_version: '2.0', incrementality: 0, timestamp: headerS },
    entity: [bus(1, 'bus-1', !duplicate), bus(2, 'bus-2', true), bus(3, duplicate ? 'bus-2' : 'bus-3', true)],
  });
}

t.test('the status page lists the feed rules that fired and follows them live', { skip: chromiumSkip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'status-findings-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const feedFile = join(dir, 'buses.pb');
  const write = (headerS: number, duplicate: boolean) => writeFileSync(feedFile, snapshot(headerS, duplicate));
  const startS = Math.floor(Date.now() / 1000);
  write(startS, true);
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'status.duckdb'),
    feeds: [
      { id: 'buses', kind: 'gtfs-rt', url: pathToFileURL(feedFile).href, interval_s: 1, timeout_s: 0.8, mode: 'bus' },
    ],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    status: { tick_ms: 250 },
  });
  const service = await startService(config, { log: silentLogger });
  t.teardown(() => service.close());
  const { url } = service;

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const watch = watchPage(page, url, newWatch());
  t.equal((await page.goto(`${url}/status`))?.status(), 200);
  await page.waitForSelector('#live.on', { timeout: 10_000 });
  await page.waitForSelector(`${card} li[data-rule="E052"]`, { timeout: 15_000 });
  await page.waitForSelector(`${card} li[data-rule="W001"]`, { timeout: 5_000 });
  const e052 = page.locator(`${card} li[data-rule="E052"]`);
  t.equal(await e052.locator('code').innerText(), 'E052');
  t.equal(await e052.locator('.title').innerText(), 'vehicle.id is not unique');
  t.ok(Number(await e052.locator('.count').innerText()) >= 1, 'findings in the last hour');
  t.equal(await e052.locator('.example').innerText(), 'e3', 'the entity it was about');
  t.equal(await e052.getAttribute('class'), 'f-error');
  t.equal(await page.locator(`${card} li[data-rule="W001"] .example`).innerText(), 'e1');
  t.equal(await page.getAttribute(card, 'data-state'), 'operational', 'findings alone: operational');
  await page.evaluate(() => {
    (window as unknown as { marker: number }).marker = 7;
  });

  // a snapshot older than the one before: the live data went back in time
  write(startS - 30, false);
  await page.waitForSelector(`${card}[data-state="degraded"]`, { timeout: 15_000 });
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator(card).screenshot({ path: join(ARTIFACTS, 'status-findings.png') });
  t.match(
    await page.locator(`${card} .reason`).innerText(),
    /last snapshot breaks E018 \(GTFS-rt header timestamp decreased/,
  );
  t.equal(
    await page.locator(`${card} li[data-rule="E018"] .title`).innerText(),
    'GTFS-rt header timestamp decreased between two sequential iterations',
  );

  write(startS + 2, false);
  await page.waitForSelector(`${card}[data-state="operational"]`, { timeout: 15_000 });
  t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 7, 'never reloaded');
  t.equal(await page.locator(`${card} li[data-rule]`).count(), 3, 'the hour keeps all three');

  const validator = new OpenApiValidator(
    (await (await fetch(`${url}/openapi.json`)).json()) as Record<string, unknown>,
  );
  const res = await fetch(`${url}/status.json`);
  const text = await res.text();
  t.same(
    validator.check('GET', '/status.json', res.status, res.headers, text).errors,
    [],
    'matches the OpenAPI document',
  );
  const doc = JSON.parse(text) as {
    feeds: { findings: { rule: string; example_entity_id: string | null; unusable: boolean }[] }[];
  };
  t.same(doc.feeds[0]!.findings.map((f) => [f.rule, f.unusable]).sort(), [
    ['E018', true],
    ['E052', false],
    ['W001', false],
  ]);
  t.same(watch.consoleErrors, [], 'no console errors');
  t.same(watch.foreign, [], 'no request leaves the server');
});
