// The reliability endpoints and the bus directory's snapshots on a real server, every response
// checked against the served OpenAPI document. Data: test/support/reliability-data.ts.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { BusReliabilitySnapshots } from '../http/read/reliability-snapshots.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { scheduleFinalize } from '../store/reliability/index.ts';
import { checker, loadValidator } from './support/client.ts';
import { bearer, startHarness } from './support/harness.ts';
import { FIRST_DAY, LAST_FINALIZED, seedRailDay, seedReliability, TODAY } from './support/reliability-data.ts';
import { silentLogger } from './support/logs.ts';

interface Row {
  id: string;
  route_id: string;
  period: string;
  period_start: string;
  period_end: string;
  service_day: string;
  days: number;
  final: boolean;
  scheduled: number;
  delivered: number;
  canceled: number;
  canceled_unscheduled: number;
  partially_canceled: number;
  unobserved: number;
  pending: number;
  added: number;
  delivered_pct: number | null;
  rolling_7d: { from: string; to: string; scheduled: number; delivered: number; delivered_pct: number | null } | null;
  observed: number;
  delivered_pct_of_observed: number | null;
}

const counts = (r: Row) => ({
  scheduled: r.scheduled,
  delivered: r.delivered,
  canceled: r.canceled,
  partially_canceled: r.partially_canceled,
  unobserved: r.unobserved,
  pending: r.pending,
  delivered_pct: r.delivered_pct,
  observed: r.observed,
  delivered_pct_of_observed: r.delivered_pct_of_observed,
});

t.test('reliability endpoints', async (t) => {
  const bus = new InMemoryEventBus();
  let snapshots: BusReliabilitySnapshots | undefined;
  const h = await startHarness({
    // the data change between requests here, so the retained window is never reused
    routes: ({ db, config }) => reliabilityRoutes({ db, settings: config.reliability, windowMaxAgeMs: 0 }),
    reliability: ({ db }) => {
      snapshots = new BusReliabilitySnapshots(db);
      snapshots.follow(bus);
      return snapshots;
    },
  });
  t.teardown(async () => {
    await snapshots?.close();
    await h.close();
  });
  const v = await loadValidator(h);
  const call = checker(t, h, v);
  const key = bearer(await h.key('regular'));

  t.test('rail and streetcar without retained rows: 404 no_retained_rows', async (t) => {
    await seedReliability(h.db);
    for (const path of ['/api/v1/rail/Red/reliability', '/api/v1/streetcar/E/reliability?group=week']) {
      const r = await call(path, key);
      t.equal(r.status, 404, path);
      t.equal(r.json.code, 'no_retained_rows');
    }
  });

  t.test('defaults: the last 28 days by day, cut to the retained window', async (t) => {
    const r = await call('/api/v1/bus/39/reliability', key);
    t.equal(r.status, 200);
    t.equal(r.headers.get('x-meter-unit'), 'request');
    t.same(
      r.json.meta,
      {
        mode: 'bus',
        route_id: '39',
        group: 'day',
        from: FIRST_DAY,
        to: TODAY,
        split: 'none',
        timezone: 'America/New_York',
        complete_through: LAST_FINALIZED,
        retained_window: { from: FIRST_DAY, to: TODAY, finalized_through: LAST_FINALIZED },
        days_without_observations: [],
        notes: r.json.meta.notes,
      },
      'every day of the window has observations',
    );
    // the first days' 7-day figures reach into the week before history began: scheduled, never seen
    t.match(r.json.meta.notes, [
      new RegExp(
        '^More than half of the scheduled trips of the 7-day figures were never observed in 3 of 12 row' +
          String.raw`s \(39 2024-04-20: 9 of 12; 39 2024-04-21: 10 of 16; 39 2024-04-22: 11 of 20\): `,
      ),
    ]);
    t.equal(r.json.meta.notes.length, 1, 'no row of its own is mostly unobserved');
    const rows = r.json.data as Row[];
    t.equal(rows.length, 12, '2024-04-20..2024-05-01');
    t.same(
      rows.map((x) => x.period),
      rows.map((x) => x.period_start),
      'a day is its own period',
    );
    t.same(rows[0], {
      id: `39:${FIRST_DAY}`,
      route_id: '39',
      period: FIRST_DAY,
      period_start: FIRST_DAY,
      period_end: FIRST_DAY,
      service_day: 'all',
      days: 1,
      final: true,
      scheduled: 4,
      delivered: 2,
      canceled: 1,
      canceled_unscheduled: 0,
      partially_canceled: 1,
      unobserved: 1,
      pending: 0,
      added: 0,
      delivered_pct: 50,
      observed: 3,
      delivered_pct_of_observed: 66.67,
      rolling_7d: rows[0]!.rolling_7d,
      days_observed: 1,
    });
    // 2024-04-18 and 19 are in the live window (14 days back from today), scheduled and never seen
    t.same(rows[0]!.rolling_7d, {
      from: '2024-04-14',
      to: FIRST_DAY,
      scheduled: 12,
      delivered: 2,
      delivered_pct: 16.67,
      unobserved: 9,
      observed: 3,
      delivered_pct_of_observed: 66.67,
    });
    const apr26 = rows.find((x) => x.period === '2024-04-26')!;
    t.same(apr26.rolling_7d, {
      from: FIRST_DAY,
      to: '2024-04-26',
      scheduled: 28,
      delivered: 14,
      delivered_pct: 50,
      unobserved: 7,
      observed: 21,
      delivered_pct_of_observed: 66.67,
    });
    const today = rows.at(-1)!;
    t.same(
      { period: today.period, final: today.final, ...counts(today) },
      {
        period: TODAY,
        final: false,
        scheduled: 4,
        delivered: 1,
        canceled: 0,
        partially_canceled: 0,
        unobserved: 0,
        pending: 3,
        delivered_pct: 25,
        observed: 1,
        delivered_pct_of_observed: 100,
      },
      'today is live: trips not seen yet are pending',
    );
  });

  t.test('group=week: ISO weeks, cut by the range', async (t) => {
    const r = await call(`/api/v1/bus/39/reliability?group=week&from=${FIRST_DAY}&to=${TODAY}`, key);
    t.equal(r.status, 200);
    const rows = r.json.data as Row[];
    t.same(
      rows.map((x) => [x.period, x.period_start, x.period_end, x.days, x.final]),
      [
        ['2024-W16', '2024-04-20', '2024-04-21', 2, true],
        ['2024-W17', '2024-04-22', '2024-04-28', 7, true],
        ['2024-W18', '2024-04-29', '2024-05-01', 3, false],
      ],
    );
    t.same(counts(rows[1]!), {
      scheduled: 28,
      delivered: 14,
      canceled: 7,
      partially_canceled: 7,
      unobserved: 7,
      pending: 0,
      delivered_pct: 50,
      observed: 21,
      delivered_pct_of_observed: 66.67,
    });
    t.ok(
      rows.every((x) => x.rolling_7d === null),
      'rolling figures belong to days',
    );
  });

  t.test('group=period: one row, numerator and denominator', async (t) => {
    const r = await call(`/api/v1/bus/66/reliability?group=period&from=2024-04-24&to=${LAST_FINALIZED}`, key);
    t.equal(r.status, 200);
    t.same(
      r.json.data.map((x: Row) => [x.id, x.period, x.days, x.final]),
      [['66:2024-04-24/2024-04-30', '2024-04-24/2024-04-30', 7, true]],
    );
    // weekdays 24, 25, 26, 29, 30: 66_a every time, 66_b on the even dates
    t.same(counts(r.json.data[0]), {
      scheduled: 10,
      delivered: 8,
      canceled: 0,
      partially_canceled: 0,
      unobserved: 2,
      pending: 0,
      delivered_pct: 80,
      observed: 8,
      delivered_pct_of_observed: 100,
    });
  });

  t.test('split=service_day, and a day without trips has zeros and a null percentage', async (t) => {
    const r = await call(
      `/api/v1/bus/66/reliability?group=period&split=service_day&from=${FIRST_DAY}&to=${LAST_FINALIZED}`,
      key,
    );
    t.equal(r.status, 200);
    t.equal(r.json.meta.split, 'service_day');
    t.same(
      r.json.data.map((x: Row) => [x.service_day, x.days, x.scheduled, x.delivered, x.delivered_pct]),
      [
        ['weekday', 7, 14, 11, 78.57],
        ['saturday', 2, 0, 0, null],
        ['sunday', 2, 0, 0, null],
      ],
    );
    const sat = await call('/api/v1/bus/66/reliability?from=2024-04-27&to=2024-04-27', key);
    t.same(counts(sat.json.data[0]), {
      scheduled: 0,
      delivered: 0,
      canceled: 0,
      partially_canceled: 0,
      unobserved: 0,
      pending: 0,
      delivered_pct: null,
      observed: 0,
      delivered_pct_of_observed: null,
    });
  });

  t.test('a missing from or to defaults inside the window', async (t) => {
    const onlyTo = await call('/api/v1/bus/39/reliability?to=2024-04-25', key);
    t.same([onlyTo.json.meta.from, onlyTo.json.meta.to], [FIRST_DAY, '2024-04-25']);
    const onlyFrom = await call('/api/v1/bus/39/reliability?from=2024-04-28&group=period', key);
    t.same([onlyFrom.json.meta.from, onlyFrom.json.meta.to], ['2024-04-28', TODAY]);
  });

  t.test('400 outside the retained window, naming it', async (t) => {
    for (const [query, parameter] of [
      ['from=2024-04-19', 'from'],
      ['to=2024-05-02', 'to'],
      ['from=2023-01-01&to=2023-01-31', 'from'],
    ] as const) {
      const r = await call(`/api/v1/bus/39/reliability?${query}`, key);
      t.equal(r.status, 400, query);
      t.equal(r.json.code, 'outside_retention');
      t.equal(r.json.errors[0].parameter, parameter);
      t.match(r.json.detail, `${FIRST_DAY} to ${TODAY}`, 'the detail names the window');
      t.same(r.json.retained_window, { from: FIRST_DAY, to: TODAY, finalized_through: LAST_FINALIZED });
    }
  });

  t.test('malformed parameters: 400 naming the parameter', async (t) => {
    for (const [query, parameter] of [
      ['group=month', 'group'],
      ['from=2024-02-30', 'from'],
      ['to=yesterday', 'to'],
      ['split=weekday', 'split'],
      ['from=2024-04-28&to=2024-04-21', 'to'],
      ['route=39', 'route'],
    ] as const) {
      const r = await call(`/api/v1/bus/39/reliability?${query}`, key);
      t.equal(r.status, 400, query);
      t.equal(r.json.errors?.[0]?.parameter, parameter, `${query} names ${parameter}`);
    }
    for (const id of ['%00', 'x'.repeat(201), '%E2%28']) {
      const r = await call(`/api/v1/bus/${id}/reliability`, key);
      t.ok(r.status === 400 || r.status === 404, `route id ${id.slice(0, 12)}: ${r.status}, never a 5xx`);
    }
    t.same(h.errors, [], 'nothing failed inside');
  });

  t.test('unknown routes and lines: 404 not_found', async (t) => {
    for (const [path, parameter] of [
      ['/api/v1/bus/999/reliability', 'route_id'],
      ['/api/v1/bus/Red/reliability', 'route_id'],
      ['/api/v1/rail/Purple/reliability', 'line'],
      ['/api/v1/streetcar/39/reliability', 'route_id'],
    ] as const) {
      const r = await call(path, key);
      t.equal(r.status, 404, path);
      t.match(r.json, { code: 'not_found', errors: [{ parameter }] });
    }
  });

  t.test('rail with retained rows answers; streetcar still has none', async (t) => {
    await seedRailDay(h.db, '2024-04-29');
    const rail = await call('/api/v1/rail/Red/reliability?group=period', key);
    t.equal(rail.status, 200);
    t.same(
      [rail.json.meta.from, rail.json.meta.to],
      ['2024-04-29', TODAY],
      'the rail window starts at its first retained day',
    );
    t.match(rail.json.data[0], { route_id: 'Red', scheduled: 3, delivered: 1 });
    t.equal((await call('/api/v1/streetcar/E/reliability', key)).json.code, 'no_retained_rows');
    const before = await call('/api/v1/rail/Red/reliability?from=2024-04-28', key);
    t.equal(before.json.code, 'outside_retention');
  });

  t.test('the bus directory shows the last seven finalized days, updated by the finalize job', async (t) => {
    await snapshots!.refresh();
    const r = await call('/api/v1/bus', key);
    t.equal(r.status, 200);
    const byId = new Map(
      r.json.data.map((b: { route_id: string; reliability: unknown }) => [b.route_id, b.reliability]),
    );
    t.same(byId.get('39'), {
      from: '2024-04-24',
      to: LAST_FINALIZED,
      scheduled: 28,
      canceled: 7,
      partially_canceled: 7,
      unobserved: 7,
      delivered: 14,
      delivered_pct: 50,
      observed: 21,
      delivered_pct_of_observed: 66.67,
    });
    t.same(byId.get('66'), {
      from: '2024-04-24',
      to: LAST_FINALIZED,
      scheduled: 10,
      canceled: 0,
      partially_canceled: 0,
      unobserved: 2,
      delivered: 8,
      delivered_pct: 80,
      observed: 8,
      delivered_pct_of_observed: 100,
    });
    t.equal(byId.get('1'), null, 'a route without figures has none');

    // the next morning the job finalizes 2024-05-01 and announces it on the bus
    const version = snapshots!.version;
    const job = await scheduleFinalize(h.db, bus, parseConfig({ reliability: { timezone: 'America/New_York' } }), {
      now: () => new Date('2024-05-02T14:00:00Z'),
      runAtStart: false,
      log: silentLogger,
    });
    t.teardown(() => job.stop());
    const done = await job.runOnce();
    t.same(
      done.map((d) => d.service_date),
      [TODAY],
    );
    for (let i = 0; i < 200 && snapshots!.version === version; i++) await new Promise((r) => setTimeout(r, 10));
    t.not(snapshots!.version, version, 'the snapshots followed the reliability.updated event');
    const after = await call('/api/v1/bus', key);
    const b39 = after.json.data.find((b: { route_id: string }) => b.route_id === '39');
    t.same(b39.reliability, {
      from: '2024-04-25',
      to: TODAY,
      scheduled: 28,
      canceled: 6,
      partially_canceled: 6,
      unobserved: 9,
      delivered: 13,
      delivered_pct: 46.43,
      observed: 19,
      delivered_pct_of_observed: 68.42,
    });
  });
});
