// The dashboard's Route performance section in headless Chromium against the real server: the
// reliability test schedule with the stop events of bus 39 (test/support/performance-data.ts) and,
// on three days, a third trip that runs early and bunched, so every figure is known by
// construction; performance.min_observations is 4, so a day's three headways are too few (a null
// with a note) while a day with the third trip has six. Nothing metered loads before the section
// is opened; the default range (the browser's last 14 days, far from the seeded 2024) is moved
// inside the retained window once; the charts' bars, points, gaps and labels are checked against
// the figures and against the API's own answer; an unknown route, a mode without history and a
// spent window show as the section's error line. A screenshot goes to test-artifacts/.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import t from 'tap';
import { createKey } from '../accounts/keys.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import type { StopEvent } from '../core/types.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { accountRoutes } from '../http/routes/account.ts';
import { performanceRoutes } from '../http/routes/performance.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import type { Db } from '../store/db.ts';
import { chromiumSkip, launchChromium, newWatch, watchPage } from './support/browser.ts';
import { bearer, startHarness } from './support/harness.ts';
import { seedStopEvents } from './support/performance-data.ts';
import { FIRST_DAY, seedReliability, TODAY } from './support/reliability-data.ts';
import type { JsonBody } from './support/json.ts';

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');
/** days with the third trip: two adjacent (a line segment) and one alone (a point between gaps) */
const EXTRA_DAYS = ['2024-04-22', '2024-04-23', '2024-04-29'];
const MIN_OBSERVATIONS = 4;

/**
 * Trip 39_x, three stops 120 s early (early: below −60 s), each departure 1,000 s after the one
 * before where 7,200 s are scheduled (bunched: ≤ 0.5 ×). Its predictions 3–6 min ahead: 2 samples
 * 30 s early at its first stop (within 90 s early: accurate), 2 samples 150 s late at its second
 * (beyond 120 s late: not).
 */
function extraTrip(date: string): StopEvent[] {
  const origin = Date.parse(`${date}T07:00:00-04:00`);
  return [0, 1, 2].map((i) => {
    const scheduled = origin + i * 600_000;
    const arrival = scheduled - 120_000;
    return {
      feed_id: 'demo-vp',
      schedule_id: 'demo',
      service_date: date,
      trip_id: '39_x',
      trip_instance: null,
      route_id: '39',
      mode: 'bus',
      direction_id: 0,
      stop_id: `S${i + 1}`,
      station_id: `S${i + 1}`,
      stop_sequence: i + 1,
      vehicle_id: 'bus-39_x',
      scheduled_arrival_ms: scheduled,
      scheduled_departure_ms: scheduled,
      actual_arrival_ms: arrival,
      actual_departure_ms: arrival,
      source: 'vp',
      arrival_source: 'vp',
      departure_source: 'vp',
      arrival_delay_s: -120,
      departure_delay_s: -120,
      dwell_s: null,
      travel_s: i === 0 ? null : 600,
      scheduled_travel_s: i === 0 ? null : 600,
      headway_s: 1_000,
      scheduled_headway_s: 7_200,
      relationship: 'scheduled',
      in_schedule: true,
      first_stop: i === 0,
      last_stop: i === 2,
      prediction_errors:
        i === 0
          ? [{ horizon: '3-6', error_s: -30, samples: 2 }]
          : i === 1
            ? [{ horizon: '3-6', error_s: 150, samples: 2 }]
            : [],
      written_ms: arrival + 60_000,
    };
  });
}

async function seed(db: Db): Promise<void> {
  // stop events first: the reliability finalize of each day stores its performance rows with it
  await seedStopEvents(db);
  await createHistoryWriter(db).write({
    vehicles: [],
    arrivals: [],
    trips: [],
    alertVersions: [],
    polls: [],
    stopEvents: EXTRA_DAYS.flatMap(extraTrip),
  });
  await seedReliability(db);
}

interface Bar {
  period: string;
  onTime: number;
  early: number;
  late: number;
  heights: number[];
}

const sharesBars = (page: Page) =>
  page.locator('#perf-shares-chart svg g.period').evaluateAll((gs) =>
    gs.map((g) => ({
      period: g.getAttribute('data-period')!,
      onTime: Number(g.getAttribute('data-on-time')),
      early: Number(g.getAttribute('data-early')),
      late: Number(g.getAttribute('data-late')),
      heights: ['rect.bar-ontime', 'rect.bar-early', 'rect.bar-late'].map((s) =>
        Number(g.querySelector(s)?.getAttribute('height')),
      ),
    })),
  ) as Promise<Bar[]>;

const gaps = (page: Page, chart: string, attr: string) =>
  page
    .locator(`#${chart} svg g.gap`)
    .evaluateAll(
      (gs, a) => gs.map((g) => ({ at: g.getAttribute(a)!, title: g.querySelector('title')?.textContent ?? '' })),
      attr,
    );

const near = (a: number, b: number, tolerance = 0.6) => Math.abs(a - b) <= tolerance;

t.test('route performance on the dashboard, in headless Chromium', { skip: chromiumSkip }, async (t) => {
  const limiter = new SlidingWindowLimiter();
  const h = await startHarness({
    limiter,
    config: { performance: { min_observations: MIN_OBSERVATIONS } },
    routes: ({ db, config }) => [
      ...accountRoutes({ db, limiter }),
      ...performanceRoutes({ db, settings: config.reliability, performance: config.performance, windowMaxAgeMs: 0 }),
      ...dashboardRoutes(),
    ],
  });
  t.teardown(() => h.close());
  await seed(h.db);
  const regular = await createKey(h.db, { plan: 'regular', name: 'analyst' });
  const api = async (path: string) => (await h.get(`/api/v1/${path}`, bearer(regular.key))).json();

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const watch = newWatch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // the refused calls below are deliberate; webhooks and exports are not served here (404)
  watchPage(page, h.url, watch, {
    ignoreConsole: /^Failed to load resource: the server responded with a status of (400|404|429) /,
  });
  await page.goto(`${h.url}/dashboard`);
  const asked = (what: RegExp) => watch.urls.filter((u) => what.test(new URL(u).pathname)).length;
  const PERFORMANCE = /^\/api\/v1\/(bus|rail|streetcar)\/[^/]+\/performance$/;
  const DIRECTORY = /^\/api\/v1\/(bus|rail|streetcar)$/;
  const show = async () => {
    await page.click('#performance-show');
    await page.waitForSelector('#performance[aria-busy="false"]', { state: 'attached' });
  };

  await page.fill('#key', regular.key);
  await page.click('#signin-button');
  await page.waitForSelector('#plan-body .plan[data-plan="regular"]');
  await page.click('#refresh');
  await page.waitForSelector('#refresh:not([disabled])');

  await t.test('nothing metered of the section before it is opened', async (t) => {
    t.equal(asked(DIRECTORY) + asked(PERFORMANCE), 0, 'no route list, no performance call at sign-in or refresh');
    t.notOk(await page.locator('#performance-form').isVisible(), 'the section is closed');
    t.equal(await page.locator('#performance > .error').isVisible(), false);
  });

  await t.test('opening it loads the bus routes once', async (t) => {
    await page.click('#performance-panel > summary');
    await page.waitForSelector('#performance-route:not([disabled])');
    const options = await page
      .locator('#performance-route option')
      .evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    t.same(options, [
      ['1', '1 · Harvard - Nubian via Mass Ave'],
      ['39', '39 · Forest Hills - Back Bay'],
      ['66', '66 · Harvard - Nubian'],
    ]);
    await page.click('#performance-panel > summary');
    await page.click('#performance-panel > summary');
    t.equal(asked(DIRECTORY), 1, 'closing and opening again asks nothing');
    t.same([await page.inputValue('#performance-group'), await page.inputValue('#performance-mode')], ['day', 'bus']);
    const from = await page.inputValue('#performance-from');
    const to = await page.inputValue('#performance-to');
    t.equal((Date.parse(to) - Date.parse(from)) / 86_400_000, 13, 'the last 14 days by default');
  });

  await t.test('by day: stacked shares, headways with gaps and their notes, accuracy by horizon', async (t) => {
    const before = asked(PERFORMANCE);
    await page.selectOption('#performance-route', '39');
    await show();
    await page.waitForSelector('#perf-accuracy-chart svg');
    t.equal(asked(PERFORMANCE) - before, 3, 'the default range refused, moved inside the window, then the period');
    t.same(
      [await page.inputValue('#performance-from'), await page.inputValue('#performance-to')],
      [FIRST_DAY, TODAY],
      'the default range moved inside the retained window: as long as it fits',
    );
    t.match(await page.locator('#performance-summary .moved').innerText(), /outside the retained window/);
    t.match(
      await page.locator('#performance-summary').innerText(),
      `Bus route 39 · Forest Hills - Back Bay · ${FIRST_DAY} to ${TODAY} (America/New_York service days) · by day`,
    );
    const answer = await api(`bus/39/performance?group=day&from=${FIRST_DAY}&to=${TODAY}`);
    t.equal(answer.data.length, 12);

    // (1) on time / early / late: every day has a figure
    const bars = await sharesBars(page);
    t.same(
      bars.map((b) => [b.period, b.onTime, b.early, b.late]),
      answer.data.map((r: JsonBody) => [r.period, r.on_time_pct, r.early_pct, r.late_pct]),
      "one stacked bar per day, the API's figures",
    );
    for (const b of bars) {
      const expected = EXTRA_DAYS.includes(b.period) ? [33.33, 33.33, 33.33] : [50, 0, 50];
      t.same([b.onTime, b.early, b.late], expected, `${b.period}: known by construction`);
    }
    const full = bars[0]!.heights.reduce((a, b) => a + b, 0);
    for (const b of bars) {
      const total = b.heights.reduce((a, x) => a + x, 0);
      t.ok(near(total, full), `${b.period}: the stack fills the plot`);
      t.ok(
        [b.onTime, b.early, b.late].every((v, i) => near(b.heights[i]!, (v / 100) * full)),
        `${b.period}: each part as high as its share`,
        { heights: b.heights },
      );
    }
    t.equal(await page.locator('#perf-shares-chart svg g.gap').count(), 0, 'no gap');
    const labels = await page.locator('#perf-shares-chart svg .axis text').allTextContents();
    t.ok(labels.includes('04-30') && labels.includes('05-01') && labels.includes('100%'), 'dates and percents');

    // (2) headways: only the days with the third trip have six, enough for a figure
    const heads = await page
      .locator('#perf-headways-chart svg g.period')
      .evaluateAll((gs) =>
        gs.map((g) => [
          g.getAttribute('data-period'),
          Number(g.getAttribute('data-headway-on-time')),
          Number(g.getAttribute('data-bunched')),
        ]),
      );
    t.same(
      heads,
      EXTRA_DAYS.map((d) => [d, 50, 50]),
      'half on time (7,570 of 7,200 s), half bunched (1,000 of 7,200 s)',
    );
    const headGaps = await gaps(page, 'perf-headways-chart', 'data-period');
    t.same(
      headGaps.map((g) => g.at),
      answer.data.map((r: JsonBody) => r.period).filter((p: string) => !EXTRA_DAYS.includes(p)),
      'every other day is a gap, not a 0',
    );
    for (const g of headGaps)
      t.match(g.title, /3 headways, fewer than the 4 needed/, `${g.at}: the note is its tooltip`);
    const noted = page.locator('#perf-headways-figure ul.gaps li');
    t.equal(await noted.count(), 1, 'the same note for every gap: said once');
    t.equal(await noted.getAttribute('data-periods'), headGaps.map((g) => g.at).join(' '), 'for each of them');
    t.match(
      await noted.innerText(),
      /median_headway_s, scheduled_median_headway_s: 3 headways, fewer than the 4 needed/,
    );
    const cells = await page
      .locator(`#perf-headways-figure table tr[data-period="${FIRST_DAY}"] > *`)
      .evaluateAll((cs) => cs.map((c) => c.textContent));
    t.same(cells.slice(0, 7), [FIRST_DAY, '3', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'], 'the table says n/a');
    t.match(cells[7], /fewer than the 4 needed/, 'with the note');
    const points = await page
      .locator('#perf-headways-chart svg circle.point')
      .evaluateAll((cs) =>
        cs.map((c) => [
          c.getAttribute('class'),
          c.getAttribute('data-period'),
          Number(c.getAttribute('data-seconds')),
          Number(c.getAttribute('cy')),
        ]),
      );
    t.same(
      points.filter((p) => p[0] === 'point median').map((p) => [p[1], p[2]]),
      EXTRA_DAYS.map((d) => [d, 4_285]),
      'median headway: (1,000 + 7,570) / 2',
    );
    t.same(
      points.filter((p) => p[0] === 'point scheduled').map((p) => [p[1], p[2]]),
      EXTRA_DAYS.map((d) => [d, 7_200]),
    );
    const [median, scheduled] = [
      points.find((p) => p[0] === 'point median')!,
      points.find((p) => p[0] === 'point scheduled')!,
    ];
    t.ok((median[3] as number) > (scheduled[3] as number), 'the shorter headway is drawn lower');
    const path = (await page.locator('#perf-headways-chart svg path.line.median').getAttribute('d')) ?? '';
    t.same(
      [path.split('M').length - 1, path.split('L').length - 1],
      [2, 1],
      'one segment over the adjacent days, a lone point after the gap: the gap breaks the line',
    );

    // (3) prediction accuracy by horizon over the range (group=period)
    const horizons = await page
      .locator('#perf-accuracy-chart svg g.horizon')
      .evaluateAll((gs) =>
        gs.map((g) => [
          g.getAttribute('data-horizon'),
          Number(g.getAttribute('data-accurate')),
          Number(g.getAttribute('data-predictions')),
        ]),
      );
    t.same(
      horizons,
      [
        ['0-3', 100, 72],
        ['3-6', 50, 12],
      ],
      '0–3 min: 6 a day, 20 s off; 3–6 min: half within the bounds',
    );
    const errors = await page
      .locator('#perf-accuracy-chart svg circle.point.abs-error')
      .evaluateAll((cs) => cs.map((c) => [c.getAttribute('data-horizon'), Number(c.getAttribute('data-seconds'))]));
    t.same(
      errors,
      [
        ['0-3', 20],
        ['3-6', 30],
      ],
      'median absolute error',
    );
    const accuracyGaps = await gaps(page, 'perf-accuracy-chart', 'data-horizon');
    t.same(
      accuracyGaps.map((g) => g.at),
      ['6-12', '12-30'],
      'no prediction that far ahead: gaps',
    );
    for (const g of accuracyGaps) t.match(g.title, /prediction_accuracy 6-12, 12-30: fewer than 4 predictions judged/);
    t.match(await page.locator('#perf-accuracy-figure ul.gaps').innerText(), /6-12, 12-30: fewer than 4 predictions/);
    t.same(
      await page
        .locator('#perf-accuracy-chart svg .axis text')
        .allTextContents()
        .then((x) => x.filter((l) => /min$/.test(l))),
      ['0–3 min', '3–6 min', '6–12 min', '12–30 min'],
    );
    // the whole range: 81 arrivals, 9 early, 36 late
    t.match(await page.locator('#performance-body [data-fact="on_time_pct"] dd').innerText(), '44.44%');
    t.match(
      await page.locator('#perf-shares-chart svg title').first().textContent(),
      /per day, bus route 39, 2024-04-20 to 2024-05-01/,
    );
    t.equal(await page.locator('#perf-shares-figure table tbody tr').count(), 12, 'the table lists every day');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#performance').screenshot({ path: join(ARTIFACTS, 'dashboard-performance.png') });
  });

  await t.test('by week: the picked range as it is', async (t) => {
    const before = asked(PERFORMANCE);
    await page.selectOption('#performance-group', 'week');
    await show();
    t.equal(asked(PERFORMANCE) - before, 2, 'the periods and the whole range');
    const answer = await api(`bus/39/performance?group=week&from=${FIRST_DAY}&to=${TODAY}`);
    const bars = await sharesBars(page);
    t.same(
      bars.map((b) => [b.period, b.onTime, b.early, b.late]),
      answer.data.map((r: JsonBody) => [r.period, r.on_time_pct, r.early_pct, r.late_pct]),
    );
    // 2024-W17: 7 days of 6 arrivals and two third trips: 48 arrivals, 6 early, 21 late
    t.same(
      bars.find((b) => b.period === '2024-W17'),
      { period: '2024-W17', onTime: 43.75, early: 12.5, late: 43.75, heights: bars[1]!.heights },
    );
    const heads = await page
      .locator('#perf-headways-chart svg g.period')
      .evaluateAll((gs) =>
        gs.map((g) => [
          g.getAttribute('data-period'),
          Number(g.getAttribute('data-headway-on-time')),
          Number(g.getAttribute('data-bunched')),
        ]),
      );
    t.same(heads, [
      ['2024-W16', 100, 0],
      ['2024-W17', 77.78, 22.22],
      ['2024-W18', 75, 25],
    ]);
    t.equal(await page.locator('#perf-headways-chart svg g.gap').count(), 0, 'a week has headways enough');
    t.same(
      await page
        .locator('#perf-shares-chart svg .axis text')
        .allTextContents()
        .then((x) => x.filter((l) => /^W/.test(l))),
      ['W16', 'W17', 'W18'],
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(
      () => Number(document.querySelector('#perf-accuracy-chart svg')?.getAttribute('width')) <= 390,
    );
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    t.ok(width <= 390, `redrawn for a phone, no horizontal scrolling (content ${width} px wide)`);
    await page.locator('#performance').screenshot({ path: join(ARTIFACTS, 'dashboard-performance-phone.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  await t.test('problems are the section’s error line', async (t) => {
    const error = page.locator('#performance > .error');
    const before = asked(PERFORMANCE);
    await page.fill('#performance-from', '2024-04-30');
    await page.fill('#performance-to', '2024-04-21');
    await page.click('#performance-show');
    t.match(await page.locator('#performance-form-error').innerText(), /ends before it starts/);
    t.equal(asked(PERFORMANCE), before, 'a reversed range asks nothing');
    await page.fill('#performance-from', FIRST_DAY);
    await page.fill('#performance-to', TODAY);

    await page.selectOption('#performance-route', '1');
    await show();
    await error.waitFor({ state: 'visible' });
    t.match(
      await error.innerText(),
      /Not found: Unknown route "1" for bus/,
      'a route of the directory without schedule or history',
    );
    t.equal(await page.locator('#performance-body').innerHTML(), '', 'no chart of another route stays');
    t.notOk(await page.locator('#performance-form-error').isVisible());

    await page.selectOption('#performance-mode', 'rail');
    await page.waitForSelector('#performance-route option[value="Red"]', { state: 'attached' });
    t.equal(asked(DIRECTORY), 2, 'another mode: its list, once');
    await page.selectOption('#performance-route', 'Red');
    await show();
    t.match(await error.innerText(), /No rail trips are retained yet/);

    await page.selectOption('#performance-mode', 'bus');
    await page.selectOption('#performance-route', '39');
    await show();
    t.notOk(await error.isVisible(), 'an answer clears the line');
    t.equal(await page.locator('#perf-shares-chart svg g.period').count(), 3);
    t.equal(asked(DIRECTORY), 2, 'the bus list was kept');
  });

  await t.test('a Free key with its window spent; sign out leaves nothing', async (t) => {
    await page.click('#signout');
    t.equal(await page.locator('#performance-body').innerHTML(), '');
    t.notOk(await page.evaluate(() => (document.getElementById('performance-panel') as HTMLDetailsElement).open));
    const free = await createKey(h.db, { plan: 'free', name: 'free' });
    await page.fill('#key', free.key);
    await page.click('#signin-button');
    await page.waitForSelector('#plan-body .plan[data-plan="free"]');
    let status = 0;
    for (let i = 0; i < 25 && status !== 429; i++) {
      const res = await h.get('/api/v1/alerts', bearer(free.key));
      status = res.status;
      await res.arrayBuffer();
    }
    t.equal(status, 429, 'the window is spent');
    await page.click('#performance-panel > summary');
    const error = page.locator('#performance > .error');
    await error.waitFor({ state: 'visible' });
    t.match(await error.innerText(), /Rate limit exceeded.*Retry in \d/s, 'the route list did not load: why');
    t.ok(await page.locator('#performance-reload').isVisible(), 'and a button to ask again');
    t.ok(await page.locator('#performance-route').isDisabled());
  });

  t.same(watch.consoleErrors, [], 'no console errors (no CSP violation)');
  t.same(watch.foreign, [], 'no request leaves the server');
  t.same(h.errors, [], 'no internal error');
});
