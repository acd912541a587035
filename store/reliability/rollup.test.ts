import t from 'tap';
import type { TripObservation } from '../../core/types.ts';
import type { Db } from '../db.ts';
import { addDays, daysBetween } from '../../core/dates.ts';
import { finalizeServiceDay } from './finalize.ts';
import { formatRollupTable } from '../../admin/operations/reliability-table.ts';
import { rollup, RollupInputError, type RollupRow } from './rollup.ts';
import { refreshScheduledTrips } from './scheduled-trips.ts';
import {
  EVERY_DAY,
  appendObservations,
  insertSchedule,
  obs,
  openTestDb,
} from '../../test/support/reliability-builders.ts';
import { reliabilitySnapshot, retainedWindow } from './window.ts';

// Two weeks across the ISO year boundary (2024-W52, 2025-W01); the last day is "today", live.
const FIRST = '2024-12-23';
const TODAY = '2025-01-05';
const NOW = new Date('2025-01-05T15:00:00-06:00');
const OPTS = { timezone: 'America/Chicago', now: NOW, liveMaxAgeMs: 0 };

const isoDow = (d: string): number => ((new Date(`${d}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
/** B1: 10 trips on weekdays, 4 on Saturdays, none on Sundays; B2: 5 a day; L (rail): 6 a day. */
function tripsOf(route: string, d: string): number {
  if (route === 'B1') return isoDow(d) <= 5 ? 10 : isoDow(d) === 6 ? 4 : 0;
  return route === 'B2' ? 5 : 6;
}
/** finished days: B1 loses its first trip on weekdays, B2 loses (day index % 3) trips */
function canceledOf(route: string, d: string): number {
  if (route === 'B1') return isoDow(d) <= 5 ? 1 : 0;
  return route === 'B2' ? daysBetween(FIRST, d) % 3 : 0;
}

async function setup(): Promise<Db> {
  const db = await openTestDb();
  const trips = [];
  for (const [route, n] of [
    ['B1', 10],
    ['B2', 5],
    ['L', 6],
  ] as const) {
    for (let i = 0; i < n; i++) {
      const service = route === 'B1' ? (i < 4 ? 'B1ALL' : 'B1WK') : 'ALL';
      trips.push({
        trip_id: `${route}-${i}`,
        route_id: route,
        service_id: service,
        start_s: 6 * 3600 + i * 3600,
        end_s: 7 * 3600 + i * 3600,
      });
    }
  }
  await insertSchedule(db, {
    schedule_id: 's',
    timezone: 'America/Chicago',
    routes: [
      { route_id: 'B1', route_type: 3, mode: 'bus' },
      { route_id: 'B2', route_type: 3, mode: 'bus' },
      { route_id: 'L', route_type: 1, mode: 'rail' },
    ],
    calendar: [
      { service_id: 'ALL', days: EVERY_DAY, start_date: '2024-01-01', end_date: '2025-12-31' },
      {
        service_id: 'B1ALL',
        days: [true, true, true, true, true, true, false],
        start_date: '2024-01-01',
        end_date: '2025-12-31',
      },
      {
        service_id: 'B1WK',
        days: [true, true, true, true, true, false, false],
        start_date: '2024-01-01',
        end_date: '2025-12-31',
      },
    ],
    trips,
  });
  await refreshScheduledTrips(db, 's', FIRST, TODAY);
  const rows: TripObservation[] = [];
  for (let d = FIRST; d <= TODAY; d = addDays(d, 1)) {
    for (const route of ['B1', 'B2', 'L']) {
      const mode = route === 'L' ? 'rail' : 'bus';
      for (let i = 0; i < tripsOf(route, d); i++) {
        const base = {
          service_date: d,
          trip_id: `${route}-${i}`,
          route_id: route,
          mode,
          observed_ms: Date.parse(`${d}T12:00:00Z`),
        } as const;
        if (d === TODAY) {
          if (i < 2) rows.push(obs(base)); // the rest is still to come
        } else if (i < canceledOf(route, d)) {
          rows.push(obs({ ...base, relationship: 'canceled' }));
        } else {
          rows.push(obs(base), obs({ ...base, source: 'vehicle_position' }));
        }
      }
    }
  }
  await appendObservations(db, rows);
  for (let d = FIRST; d < TODAY; d = addDays(d, 1)) await finalizeServiceDay(db, d);
  return db;
}

function expectedDay(route: string, d: string): { scheduled: number; delivered: number; canceled: number } {
  if (d > TODAY) return { scheduled: 0, delivered: 0, canceled: 0 };
  // asked for before any observation: expanded on demand, all unobserved
  if (d < FIRST) return { scheduled: tripsOf(route, d), delivered: 0, canceled: 0 };
  const scheduled = tripsOf(route, d);
  if (d === TODAY) return { scheduled, delivered: Math.min(2, scheduled), canceled: 0 };
  return { scheduled, delivered: scheduled - canceledOf(route, d), canceled: canceledOf(route, d) };
}

const pct = (num: number, den: number): number | null => (den > 0 ? Math.round((10_000 * num) / den) / 100 : null);

t.test('rollups', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());

  t.test('day: counts, no division by zero, rolling 7 days', async (t) => {
    const res = await rollup(db, { mode: 'bus', routeId: 'B1', group: 'day', from: '2024-12-25', to: TODAY }, OPTS);
    t.equal(res.rows.length, 12, 'one row per day, days without trips included');
    for (const row of res.rows) {
      const d = row.period;
      const e = expectedDay('B1', d);
      t.same([row.scheduled, row.delivered, row.canceled], [e.scheduled, e.delivered, e.canceled], d);
      t.equal(row.delivered_pct, pct(e.delivered, e.scheduled), `${d} pct`);
      t.same(
        [row.observed, row.delivered_pct_of_observed],
        [e.delivered + e.canceled, pct(e.delivered, e.delivered + e.canceled)],
        `${d} of observed`,
      );
      let s7 = 0;
      let d7 = 0;
      let u7 = 0;
      let o7 = 0;
      for (let k = 0; k < 7; k++) {
        const day = addDays(d, -k);
        const x = expectedDay('B1', day);
        s7 += x.scheduled;
        d7 += x.delivered;
        o7 += x.delivered + x.canceled;
        // days before the first observation are over and were never seen
        if (day < FIRST) u7 += x.scheduled;
      }
      t.same(
        row.rolling_7d,
        {
          from: addDays(d, -6),
          to: d,
          scheduled: s7,
          delivered: d7,
          delivered_pct: pct(d7, s7),
          unobserved: u7,
          observed: o7,
          delivered_pct_of_observed: pct(d7, o7),
        },
        `${d} rolling`,
      );
    }
    const sunday = res.rows.find((r) => r.period === '2024-12-29');
    t.same([sunday?.scheduled, sunday?.delivered_pct], [0, null], 'a day with no trips has a null pct');
    t.same(res.rows.at(-1)?.final, false, 'today is live');
    t.same(res.rows.at(-2)?.final, true);
  });

  t.test('week: ISO weeks across the year boundary, today live with pending trips', async (t) => {
    const res = await rollup(db, { mode: 'bus', routeId: 'B2', group: 'week', from: FIRST, to: TODAY }, OPTS);
    t.same(
      res.rows.map((r) => [r.period, r.period_start, r.period_end, r.days, r.final]),
      [
        ['2024-W52', '2024-12-23', '2024-12-29', 7, true],
        ['2025-W01', '2024-12-30', '2025-01-05', 7, false],
      ],
    );
    const [w52, w01] = res.rows as [RollupRow, RollupRow];
    t.same([w52.scheduled, w52.canceled, w52.delivered], [35, 0 + 1 + 2 + 0 + 1 + 2 + 0, 35 - 6]);
    t.same([w01.scheduled, w01.canceled, w01.pending, w01.delivered], [35, 1 + 2 + 0 + 1 + 2 + 0, 3, 35 - 6 - 3]);
    t.equal(
      w01.scheduled,
      w01.delivered + (w01.canceled - w01.canceled_unscheduled) + w01.unobserved + w01.pending,
      'counts add up',
    );
    t.equal(w52.rolling_7d, null, 'rolling figures are per day only');
    const cut = await rollup(
      db,
      { mode: 'bus', routeId: 'B2', group: 'week', from: '2024-12-26', to: '2024-12-31' },
      OPTS,
    );
    t.same(
      cut.rows.map((r) => [r.period, r.period_start, r.period_end, r.days]),
      [
        ['2024-W52', '2024-12-26', '2024-12-29', 4],
        ['2025-W01', '2024-12-30', '2024-12-31', 2],
      ],
      'weeks cut by the range are shorter',
    );
  });

  t.test('period with service-day split', async (t) => {
    const res = await rollup(
      db,
      { mode: 'bus', routeId: 'B1', group: 'period', from: FIRST, to: '2025-01-04', split: true },
      OPTS,
    );
    t.same(
      res.rows.map((r) => [r.service_day, r.days, r.scheduled, r.delivered, r.canceled, r.delivered_pct]),
      [
        ['weekday', 10, 100, 90, 10, 90],
        ['saturday', 2, 8, 8, 0, 100],
        ['sunday', 1, 0, 0, 0, null],
      ],
    );
    t.equal(res.rows[0]?.period, `${FIRST}/2025-01-04`);
  });

  t.test('all routes of a mode, 28 days', async (t) => {
    const res = await rollup(db, { mode: 'bus', group: 'day', from: addDays(TODAY, -27), to: TODAY }, OPTS);
    t.same([...new Set(res.rows.map((r) => r.route_id))], ['B1', 'B2'], 'rail is not a bus route');
    t.equal(res.rows.length, 56);
    const early = res.rows.find((r) => r.route_id === 'B2' && r.period === addDays(TODAY, -27));
    t.same(
      [early?.scheduled, early?.unobserved, early?.delivered_pct, early?.days_observed, early?.final],
      [5, 5, 0, 0, false],
      'a day before any observation: its scheduled trips, unobserved, and flagged as not observed',
    );
    const blind = res.days_without_observations;
    t.same(
      [blind.length, blind[0], blind.at(-1)],
      [14, addDays(TODAY, -27), addDays(FIRST, -1)],
      'the days before the first observation are named',
    );
    t.match(res.notes, [/No trip observations are recorded for 14 service days/]);
    t.ok(
      res.rows.filter((r) => r.period >= FIRST).every((r) => r.days_observed === 1),
      'observed days say so',
    );
    const rollingOk = res.rows.every((row) => {
      let s7 = 0;
      let d7 = 0;
      for (let k = 0; k < 7; k++) {
        const x = expectedDay(row.route_id, addDays(row.period, -k));
        s7 += x.scheduled;
        d7 += x.delivered;
      }
      return row.rolling_7d?.scheduled === s7 && row.rolling_7d.delivered === d7;
    });
    t.ok(rollingOk, "each route's rolling 7 days stay within that route");
    const rail = await rollup(db, { mode: 'rail', routeId: 'L', group: 'period', from: FIRST, to: TODAY }, OPTS);
    t.same([rail.rows[0]?.scheduled, rail.rows[0]?.delivered, rail.rows[0]?.pending], [84, 80, 4]);
  });

  t.test('a route without rows gets zero rows, not an error', async (t) => {
    const res = await rollup(db, { mode: 'streetcar', routeId: 'S9', group: 'week', from: FIRST, to: TODAY }, OPTS);
    t.same(
      res.rows.map((r) => [r.scheduled, r.delivered_pct]),
      [
        [0, null],
        [0, null],
      ],
    );
    const none = await rollup(db, { mode: 'streetcar', group: 'day', from: FIRST, to: TODAY }, OPTS);
    t.same(none.rows, [], 'no routes at all');
  });

  t.test('a past day the job has not finalized is computed live with unobserved trips', async (t) => {
    await db.run(`DELETE FROM reliability_finalized WHERE service_date = DATE '2025-01-02'`);
    await db.run(`DELETE FROM reliability_days WHERE service_date = DATE '2025-01-02'`);
    await db.run(`DELETE FROM trip_observations WHERE service_date = DATE '2025-01-02' AND trip_id = 'B2-4'`);
    const res = await rollup(
      db,
      { mode: 'bus', routeId: 'B2', group: 'day', from: '2025-01-02', to: '2025-01-02' },
      OPTS,
    );
    t.same(
      [res.rows[0]?.final, res.rows[0]?.unobserved, res.rows[0]?.pending, res.rows[0]?.delivered],
      [false, 1, 0, 5 - 1 - 1],
    );
    await finalizeServiceDay(db, '2025-01-02');
  });

  t.test('retained window and snapshot', async (t) => {
    t.same(await retainedWindow(db, 'bus'), { earliest: FIRST, latest: TODAY, finalized_through: '2025-01-04' });
    t.equal(await retainedWindow(db, 'streetcar'), null, 'no retained rows');
    const snap = await reliabilitySnapshot(db, 'bus', ['B1', 'B2', 'NOPE']);
    const b1 = snap.get('B1');
    // 2024-12-29 .. 2025-01-04: Sun 0, Mon-Fri 5 x 10 with one canceled each, Sat 4
    t.same(b1, {
      from: '2024-12-29',
      to: '2025-01-04',
      scheduled: 54,
      delivered: 49,
      canceled: 5,
      partially_canceled: 0,
      unobserved: 0,
      added: 0,
      delivered_pct: 90.74,
      observed: 54,
      delivered_pct_of_observed: 90.74,
    });
    t.same([snap.get('NOPE')?.scheduled, snap.get('NOPE')?.delivered_pct], [0, null]);
    t.equal((await reliabilitySnapshot(db, 'bus', [])).size, 0);
    await t.rejects(reliabilitySnapshot(db, 'bus', ['B1'], 0), RangeError);
  });

  t.test('the CLI table', async (t) => {
    const res = await rollup(
      db,
      { mode: 'bus', routeId: 'B1', group: 'day', from: '2024-12-28', to: '2024-12-30' },
      OPTS,
    );
    const lines = formatRollupTable(res).trimEnd().split('\n');
    t.match(lines[0], /^bus B1, 2024-12-28 to 2024-12-30, by day \(America\/Chicago/);
    t.match(
      lines[1],
      new RegExp(
        String.raw`^route\s+day\s+scheduled\s+delivered\s+canceled\s+partial\s+unobserved\s+pending\s+added\s+del` +
          String.raw`ivered %\s+of observed %\s+7-day %\s+7-day of observed %\s+final$`,
      ),
    );
    t.equal(lines.length, 6);
    t.match(
      lines[3],
      /^B1\s+2024-12-28\s+4\s+4\s+0\s+0\s+0\s+0\s+0\s+100\.00\s+100\.00\s+\d+\.\d\d\s+\d+\.\d\d\s+yes$/,
    );
    t.match(
      lines[4],
      /^B1\s+2024-12-29\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+-\s+-\s+\d+\.\d\d\s+\d+\.\d\d\s+yes$/,
      'no pct without trips',
    );
    const split = formatRollupTable(
      await rollup(db, { mode: 'rail', routeId: 'L', group: 'week', from: FIRST, to: TODAY, split: true }, OPTS),
    );
    t.match(split, /line\s+week\s+service day/);
    t.notMatch(split, /7-day/);
    const empty = formatRollupTable(
      await rollup(db, { mode: 'streetcar', group: 'day', from: FIRST, to: TODAY }, OPTS),
    );
    t.match(empty, /\(no rows\)/);
  });
});

t.test('weeks and periods are the sums of the day series (each read by its own query variant)', async (t) => {
  const db = await setup();
  t.teardown(() => db.close());
  // from a week before the first observation (days expanded on demand, left open) to two days
  // after today (future days): finalized, live, open and future days in one range
  const range = { from: '2024-12-16', to: '2025-01-07' };
  const COUNTS = [
    'scheduled',
    'delivered',
    'canceled',
    'canceled_unscheduled',
    'partially_canceled',
    'unobserved',
    'pending',
    'added',
  ] as const;
  const isoWeek = (d: string): string => {
    const date = new Date(`${d}T00:00:00Z`);
    date.setUTCDate(date.getUTCDate() + 4 - isoDow(d));
    const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
    return (
      `${date.getUTCFullYear()}` +
      `-W${String(Math.ceil(((date.getTime() - yearStart) / 86_400_000 + 1) / 7)).padStart(2, '0')}`
    );
  };
  const sumUp = (rows: RollupRow[], key: (r: RollupRow) => string) => {
    const out = new Map<string, Record<string, number | boolean>>();
    for (const r of rows) {
      const k = `${r.route_id}|${key(r)}|${r.service_day}`;
      const acc: Record<string, number | boolean> = out.get(k) ?? {
        days: 0,
        final: true,
        days_observed: 0,
        ...Object.fromEntries(COUNTS.map((c) => [c, 0])),
      };
      acc.days = (acc.days as number) + r.days;
      acc.final = acc.final === true && r.final;
      acc.days_observed = (acc.days_observed as number) + r.days_observed;
      for (const c of COUNTS) acc[c] = (acc[c] as number) + r[c];
      out.set(k, acc);
    }
    return out;
  };
  const pick = (r: RollupRow) => ({
    days: r.days,
    final: r.final,
    days_observed: r.days_observed,
    ...Object.fromEntries(COUNTS.map((c) => [c, r[c]])),
  });
  for (const [mode, routeId] of [
    ['bus', 'B1'],
    ['bus', 'B2'],
    ['bus', undefined],
    ['rail', undefined],
  ] as const) {
    for (const split of [false, true]) {
      const q = { mode, ...(routeId ? { routeId } : {}), split, ...range };
      const days = (await rollup(db, { ...q, group: 'day' }, OPTS)).rows;
      const weeks = (await rollup(db, { ...q, group: 'week' }, OPTS)).rows;
      const period = (await rollup(db, { ...q, group: 'period' }, OPTS)).rows;
      const label = `${mode} ${routeId ?? 'all routes'}${split ? ' split' : ''}`;
      t.ok(
        days.length > 0 && days.every((r) => r.days === 1 && r.rolling_7d !== null),
        `${label}: one row per day, with rolling figures`,
      );
      t.ok(
        weeks.every((r) => r.rolling_7d === null) && period.every((r) => r.rolling_7d === null),
        `${label}: no rolling figures past days`,
      );
      const byWeek = sumUp(days, (r) => isoWeek(r.period));
      t.same(
        new Map(weeks.map((r) => [`${r.route_id}|${r.period}|${r.service_day}`, pick(r)])),
        byWeek,
        `${label}: weeks`,
      );
      const whole = sumUp(days, () => `${range.from}/${range.to}`);
      t.same(
        new Map(period.map((r) => [`${r.route_id}|${r.period}|${r.service_day}`, pick(r)])),
        whole,
        `${label}: period`,
      );
      t.same(
        [...new Set(weeks.map((r) => r.route_id))],
        [...new Set(days.map((r) => r.route_id))],
        `${label}: the same routes`,
      );
    }
  }
});

t.test('bad queries are refused with the parameter named', async (t) => {
  const db = await openTestDb();
  t.teardown(() => db.close());
  const base = { mode: 'bus' as const, group: 'day' as const, from: '2024-01-01', to: '2024-01-31' };
  const cases: [Record<string, unknown>, string][] = [
    [{ mode: 'ferry' }, 'mode'],
    [{ group: 'month' }, 'group'],
    [{ from: '2024-02-30' }, 'from'],
    [{ to: 'yesterday' }, 'to'],
    [{ to: '2023-12-31' }, 'to'],
    [{ from: '2020-01-01' }, 'to'],
    [{ routeId: '' }, 'route_id'],
  ];
  for (const [patch, parameter] of cases) {
    const err = await rollup(db, { ...base, ...patch } as never).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof RollupInputError && err.parameter === parameter, `${JSON.stringify(patch)} names ${parameter}`);
  }
  await t.rejects(rollup(db, base, { timezone: 'Nowhere/Land' }), RangeError);
  const res = await rollup(db, { ...base, routeId: 'X' }, { now: new Date('2024-06-01T00:00:00Z'), liveMaxAgeMs: 0 });
  t.equal(res.timezone, 'UTC', 'no schedule: UTC');
  t.equal(res.rows.length, 31);
});
