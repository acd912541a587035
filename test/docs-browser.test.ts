// /docs rendered by headless Chromium: every operation visible, the filter works, no console
// errors, no requests leave the server, the Events section lists every event type of the document;
// screenshots kept under test-artifacts/.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { chromiumSkip, launchChromium, newWatch, watchPage } from './support/browser.ts';
import { startHarness } from './support/harness.ts';

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');

t.test('/docs in headless Chromium', { skip: chromiumSkip }, async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>;
    webhooks: Record<string, unknown>;
  };
  const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const { consoleErrors, foreign } = watchPage(page, h.url, newWatch());

  const response = await page.goto(`${h.url}/docs`);
  t.equal(response?.status(), 200);
  t.match(await page.title(), /Transit API .* documentation/);
  const sections = await page.locator('section.operation').evaluateAll((els) =>
    els.map((el) => ({
      id: el.getAttribute('data-operation'),
      heading: el.querySelector('h3')?.textContent?.trim() ?? '',
      hasCurl: /curl /.test(el.querySelector('pre')?.textContent ?? ''),
      tables: el.querySelectorAll('table').length,
    })),
  );
  t.same(
    sections.map((s) => s.id).sort(),
    [...operationIds].sort(),
    'every operation of the OpenAPI document has a section',
  );
  t.ok(
    sections.every((s) => s.hasCurl),
    'every operation has a curl example',
  );
  t.ok(
    sections.every((s) => s.tables >= 1),
    'responses are listed',
  );
  t.match(
    sections.find((s) => s.id === 'getBusRouteRealtime')?.heading,
    /GET\s+\/api\/v1\/bus\/\{route_id\}\/realtime/,
  );
  await t.resolves(
    page
      .locator('#op-listAlerts')
      .isVisible()
      .then((v) => (v ? undefined : Promise.reject(new Error('hidden')))),
  );
  t.ok(await page.locator('#op-listAlerts table').first().getByText('impact').isVisible(), 'parameters are visible');

  mkdirSync(ARTIFACTS, { recursive: true });
  // the Events section: every webhook of the document, with its data fields
  const eventTypes = await page
    .locator('#events section.event')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-event-type')));
  t.same(eventTypes, Object.keys(doc.webhooks), 'every event type of the document has a section under #events');
  await page.locator('nav a[href="#events"]').click();
  t.ok(await page.locator('#events h2').isVisible(), 'the Events section is reachable from the navigation');
  t.ok(
    await page.locator('#event-alert-updated').getByRole('cell', { name: 'version', exact: true }).isVisible(),
    'data fields are visible',
  );
  t.ok(
    await page.locator('#events').getByRole('cell', { name: 'webhook-signature', exact: true }).isVisible(),
    'webhook headers are visible',
  );
  await page.screenshot({ path: join(ARTIFACTS, 'docs-events.png') });
  await page.goto(`${h.url}/docs`);

  await page.screenshot({ path: join(ARTIFACTS, 'docs.png') });
  await page.screenshot({ path: join(ARTIFACTS, 'docs-full.png'), fullPage: true });

  await page.fill('#filter', 'streetcar');
  const visible = await page.locator('section.operation:visible').count();
  t.ok(visible > 0 && visible < sections.length, `the filter narrows the list (${visible} of ${sections.length})`);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.fill('#filter', '');
  await page.screenshot({ path: join(ARTIFACTS, 'docs-phone.png') });

  t.same(consoleErrors, [], 'no console errors');
  t.same(foreign, [], 'no request leaves the server');
  t.ok(existsSync(join(ARTIFACTS, 'docs.png')));
});
