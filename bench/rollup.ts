// Reliability at the size of a mid-size agency: one year of scheduled trips (200 routes, 20,000
// trips a day, about 7.3 million rows) generated with DuckDB range() into a temporary file, the
// year before yesterday finalized, yesterday's and today's trip observations present.
// Prints the latency of the three product paths and, as baselines measured in the same run on
// the same data, the bare queries the performance anchors describe, with the ratio.
//   node --import tsx bench/rollup.ts
//   ROUTES=200 TRIPS_PER_DAY=20000 DAYS=365 OBS_PER_TRIP=120 RUNS=15 node --import tsx bench/rollup.ts
//   BENCH_DB=/tmp/r.duckdb keeps the generated file and reuses it on the next run (same sizes)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Db } from '../store/db.ts';
import { addDays } from '../core/dates.ts';
import { finalizeServiceDay } from '../store/reliability/finalize.ts';
import { rollup } from '../store/reliability/rollup.ts';
import { report } from './report.ts';
import { runPrepared } from '../store/sql.ts';

const ROUTES = Number(process.env.ROUTES ?? 200);
const TRIPS_PER_DAY = Number(process.env.TRIPS_PER_DAY ?? 20_000);
const DAYS = Number(process.env.DAYS ?? 365);
/** observation rows per trip and day (one per poll in which the trip is seen) */
const OBS_PER_TRIP = Number(process.env.OBS_PER_TRIP ?? 120);
const RUNS = Number(process.env.RUNS ?? 15);

const FIRST = '2024-01-01';
const TODAY = addDays(FIRST, DAYS - 1);
const YESTERDAY = addDays(TODAY, -1);
const TZ = 'America/Chicago';
const NOW = new Date(`${TODAY}T18:00:00-06:00`);

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

type M = { median: number; min: number; max: number };

/**
 * Median, min and max of `runs` timed calls of each function, the functions taking turns run by
 * run. Each is first called three times to warm caches the way a running service has them: the
 * first calls after the file is opened or written load its blocks and settle DuckDB's allocator,
 * and were 2-3x slower, for every query.
 */
async function measureTogether(fns: (() => Promise<unknown>)[], runs = RUNS): Promise<M[]> {
  for (let i = 0; i < 3; i++) for (const fn of fns) await fn();
  const samples = fns.map(() => [] as number[]);
  for (let i = 0; i < runs; i++) for (const [k, fn] of fns.entries()) samples[k]!.push(await time(fn));
  return samples.map((xs) => {
    xs.sort((a, b) => a - b);
    return { median: xs[Math.floor(xs.length / 2)]!, min: xs[0]!, max: xs.at(-1)! };
  });
}

const fmt = (ms: number): string => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;

async function generate(db: Db): Promise<void> {
  const p = { first: FIRST, days: DAYS, routes: ROUTES, trips: TRIPS_PER_DAY, tz: TZ };
  await db.run(`INSERT INTO schedules VALUES ('bench', 'generated', now(), $tz, NULL, [])`, { tz: p.tz });
  // 90% bus, 6% rail, 4% streetcar routes
  await db.run(
    `INSERT INTO gtfs_routes (schedule_id, route_id, route_type, mode)
    SELECT 'bench', 'R' || lpad(CAST(r AS VARCHAR), 3, '0'),
           CASE WHEN r < $routes * 0.9 THEN 3 WHEN r < $routes * 0.96 THEN 1 ELSE 0 END,
           CASE WHEN r < $routes * 0.9 THEN 'bus' WHEN r < $routes * 0.96 THEN 'rail' ELSE 'streetcar' END
    FROM range($routes) AS t(r)`,
    { routes: p.routes },
  );
  // the expansion writes day by day, so the table is in date order as refreshes leave it
  await db.run(
    `INSERT INTO scheduled_trips
    SELECT CAST($first AS DATE) + CAST(d AS INTEGER), 'bench', 'T' || k, route_id, mode, 'ALL', CAST(k % 2 AS INTEGER),
           start_s, start_s + 2700,
           to_timestamp(epoch(timezone($tz, CAST($first AS DATE) + CAST(d AS INTEGER) + INTERVAL 12 HOUR)) - 43200
             + start_s),
           to_timestamp(epoch(timezone($tz, CAST($first AS DATE) + CAST(d AS INTEGER) + INTERVAL 12 HOUR)) - 43200 +
             start_s + 2700)
    FROM range($days) AS dd(d), range($trips) AS tt(k)
    JOIN (SELECT route_id, mode, row_number() OVER (ORDER BY route_id) - 1 AS r FROM gtfs_routes) AS routes
      ON routes.r = k % $routes,
    LATERAL (SELECT CAST(5 * 3600 + (k * 61) % (19 * 3600) AS INTEGER) AS start_s)
    ORDER BY 1, mode, route_id`,
    p,
  );
  // finalized history: outcomes as finalize stores them, a day at a time sorted by route
  await db.run(
    `INSERT INTO trip_outcomes
    SELECT service_date, mode, route_id, trip_id, schedule_id, true,
           CASE WHEN h < 20 THEN 'canceled' WHEN h < 30 THEN 'partially_canceled'
                WHEN h < 60 THEN 'unobserved' ELSE 'delivered' END,
           h = 5, false, CASE WHEN h BETWEEN 20 AND 29 THEN 2 ELSE 0 END,
           CASE WHEN h BETWEEN 30 AND 59 THEN 0 ELSE 60 END,
           NULL, NULL, scheduled_start_at
    FROM (SELECT *, hash(service_date, trip_id) % 1000 AS h FROM scheduled_trips WHERE service_date < $yesterday)
    ORDER BY service_date, mode, route_id, trip_id`,
    { yesterday: YESTERDAY },
  );
  // columns named: migrations add columns at the end (schedule_id, 020), and a positional list broke
  await db.run(`INSERT INTO reliability_days (service_date, mode, route_id, schedule_id, scheduled, delivered,
      canceled, canceled_unscheduled, partially_canceled, unobserved, added, restored)
    SELECT service_date, mode, route_id, schedule_id,
      count(*), count(*) FILTER (WHERE outcome IN ('delivered', 'partially_canceled')),
      count(*) FILTER (WHERE outcome = 'canceled'), 0,
      count(*) FILTER (WHERE outcome = 'partially_canceled'), count(*) FILTER (WHERE outcome = 'unobserved'),
      0, count(*) FILTER (WHERE restored)
    FROM trip_outcomes GROUP BY ALL ORDER BY service_date, mode, route_id`);
  await db.run(`INSERT INTO reliability_finalized
    SELECT service_date, now(), sum(scheduled), count(*) FROM reliability_days GROUP BY ALL`);
  // observations: every poll in which a trip is seen, yesterday in full and today until 18:00
  const observe = `INSERT INTO trip_observations (feed_id, service_date, trip_id, route_id, mode, relationship,
      skipped_stops, source, in_schedule, observed_at, polls, schedule_id)
    SELECT 'bench', service_date, trip_id, route_id, mode,
           CASE WHEN h < 20 AND p >= $obs / 2 THEN 'canceled' ELSE 'scheduled' END,
           CASE WHEN h BETWEEN 20 AND 29 THEN 2 ELSE 0 END,
           CASE WHEN p % 2 = 0 THEN 'trip_update' ELSE 'vehicle_position' END, true,
           scheduled_start_at + to_seconds(p * 15), 1, schedule_id
    FROM (SELECT *, hash(service_date, trip_id) % 1000 AS h FROM scheduled_trips WHERE service_date =
      CAST($day AS DATE)),
         range($obs) AS pp(p)
    WHERE NOT (h BETWEEN 30 AND 59) AND scheduled_start_at + to_seconds(p * 15) <= CAST($until AS TIMESTAMPTZ)
    ORDER BY scheduled_start_at + to_seconds(p * 15)`;
  await db.run(observe, { obs: OBS_PER_TRIP, day: YESTERDAY, until: `${TODAY}T06:00:00-06:00` });
  await db.run(observe, { obs: OBS_PER_TRIP, day: TODAY, until: NOW.toISOString() });
  await db.run('CHECKPOINT');
}

async function count(db: Db, table: string): Promise<number> {
  const [row] = await db.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(row?.n ?? 0);
}

/** the anchors' clustered table: trip_outcomes ordered by route and date (a bench-only copy) */
async function cluster(db: Db): Promise<void> {
  if ((await count(db, "information_schema.tables WHERE table_name = 'bench_outcomes_by_route'")) > 0) return;
  await db.run(
    'CREATE TABLE bench_outcomes_by_route AS SELECT * FROM trip_outcomes ORDER BY mode, route_id, service_date',
  );
  await db.run('CHECKPOINT');
}

const keep = process.env.BENCH_DB;
const dir = keep ? null : mkdtempSync(join(tmpdir(), 'bench-rollup-'));
const path = keep ?? join(dir!, 'bench.duckdb');
let db = await Db.open(path);
try {
  if ((await count(db, 'scheduled_trips')) === 0) {
    const genMs = await time(async () => {
      await generate(db);
      await cluster(db);
    });
    console.log(`generated in ${(genMs / 1000).toFixed(1)} s`);
  }
  await cluster(db);
  // measured as a service has its file: opened, not just written. Right after generating 7M rows
  // in this process DuckDB held gigabytes of buffers, and every query here, baselines included,
  // ran 1.5-2x slower than on the same file reopened.
  await db.close();
  db = await Db.open(path);
  console.log(`${ROUTES} routes, ${TRIPS_PER_DAY} trips/day, ${DAYS} days (${FIRST}..${TODAY})`);
  for (const table of ['scheduled_trips', 'trip_outcomes', 'reliability_days', 'trip_observations']) {
    console.log(`  ${table.padEnd(18)} ${(await count(db, table)).toLocaleString('en-US')} rows`);
  }
  const opts = { timezone: TZ, now: NOW };
  const busRoute = 'R000';

  // The anchors' bare queries run on trip_outcomes clustered by route and date (a bench-only
  // copy; the product appends a day at a time sorted by route within the day), and on
  // reliability_days, the per-day aggregates the rollup actually reads.
  const weeklySql = (table: string): string => `
    SELECT date_trunc('week', service_date) AS w, count(*) AS scheduled,
           count(*) FILTER (WHERE outcome IN ('delivered', 'partially_canceled')) AS delivered,
           count(*) FILTER (WHERE outcome = 'canceled') AS canceled
    FROM ${table} WHERE route_id = $r GROUP BY w ORDER BY w`;
  const dailySql = (table: string): string => `
    WITH d AS (
      SELECT route_id, service_date, count(*) AS scheduled,
             count(*) FILTER (WHERE outcome IN ('delivered', 'partially_canceled')) AS delivered
      FROM ${table} WHERE mode = 'bus' AND service_date BETWEEN CAST($from AS DATE) - 6 AND CAST($to AS DATE)
      GROUP BY ALL)
    SELECT *, sum(delivered) OVER w / sum(scheduled) OVER w AS pct_7d FROM d
    WINDOW w AS (PARTITION BY route_id ORDER BY service_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)`;
  const from28 = addDays(TODAY, -27);
  const load0 = loadavg();

  // the product and its baselines take turns, run by run, so a noisy moment of the machine falls
  // on all of them rather than on whichever was being measured then
  const [weekly, weeklyBase, weeklyClustered, weeklyClusteredPrepared, weeklyDays] = (await measureTogether([
    () => rollup(db, { mode: 'bus', routeId: busRoute, group: 'week', from: FIRST, to: TODAY }, opts),
    () => db.all(weeklySql('trip_outcomes'), { r: busRoute }),
    () => db.all(weeklySql('bench_outcomes_by_route'), { r: busRoute }),
    // the product runs its query as a statement prepared once; the bare query is timed as a user
    // would send it, and here also prepared, so the planning share is visible
    () => db.exclusive((c) => runPrepared(c, weeklySql('bench_outcomes_by_route'), { r: busRoute })),
    () =>
      db.all(
        `
      SELECT date_trunc('week', service_date) AS w, sum(scheduled), sum(delivered), sum(canceled)
      FROM reliability_days WHERE mode = 'bus' AND route_id = $r GROUP BY w ORDER BY w`,
        { r: busRoute },
      ),
  ])) as [M, M, M, M, M];

  const [daily, dailyBase, dailyClustered, dailyDays] = (await measureTogether([
    () => rollup(db, { mode: 'bus', group: 'day', from: from28, to: TODAY }, opts),
    () => db.all(dailySql('trip_outcomes'), { from: from28, to: YESTERDAY }),
    () => db.all(dailySql('bench_outcomes_by_route'), { from: from28, to: YESTERDAY }),
    () =>
      db.all(
        `
      SELECT route_id, service_date, scheduled, delivered,
             sum(delivered) OVER w / sum(scheduled) OVER w AS pct_7d
      FROM reliability_days WHERE mode = 'bus' AND service_date BETWEEN CAST($from AS DATE) - 6 AND CAST($to AS DATE)
      WINDOW w AS (PARTITION BY route_id ORDER BY service_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)`,
        { from: from28, to: YESTERDAY },
      ),
  ])) as [M, M, M, M];

  const [finalize, finalizeBase] = (await measureTogether(
    [
      () => finalizeServiceDay(db, YESTERDAY, { now: NOW }),
      () =>
        db.all(
          `
      SELECT trip_id, count(*), max(observed_at), max(skipped_stops) FROM trip_observations
      WHERE service_date = CAST($d AS DATE) GROUP BY trip_id`,
          { d: YESTERDAY },
        ),
    ],
    3,
  )) as [M, M];
  const load1 = loadavg();

  const check = await rollup(db, { mode: 'bus', routeId: busRoute, group: 'period', from: FIRST, to: TODAY }, opts);
  console.log(
    `  check: ${busRoute} over the year: ${check.rows[0]?.scheduled} scheduled, ` +
      `${check.rows[0]?.delivered_pct} % delivered`,
  );
  console.log('');
  const line = (name: string, m: M, target: number, bases: [string, M][], ratioTarget?: number): void => {
    console.log(
      `${name.padEnd(52)} median ${fmt(m.median).padStart(9)} (min ${fmt(m.min)}, max ${fmt(m.max)})  target < ` +
        `${target} ms ${m.median < target ? 'met' : 'NOT met'}`,
    );
    for (const [baseName, base] of bases) {
      console.log(
        `${''.padEnd(52)} baseline ${baseName}: ${fmt(base.median)}, ratio ${(m.median / base.median).toFixed(2)}`,
      );
    }
    if (ratioTarget !== undefined) {
      const r = m.median / bases[1]![1].median;
      console.log(
        `${''.padEnd(52)} target ≤ ${ratioTarget}× the bare query on the clustered table: ${r.toFixed(2)}× ` +
          `${r <= ratioTarget ? 'met' : 'NOT met'}`,
      );
      report({
        bench: 'rollup',
        figure: `${name} (median)`,
        value: m.median,
        unit: 'ms',
        baseline: bases[1]![0],
        baselineValue: bases[1]![1].median,
        ratio: r,
        target: `< ${target} ms, ≤ ${ratioTarget}×`,
        met: m.median < target && r <= ratioTarget,
      });
    } else {
      report({
        bench: 'rollup',
        figure: `${name} (median)`,
        value: m.median,
        unit: 'ms',
        baseline: bases[0]![0],
        baselineValue: bases[0]![1].median,
        ratio: m.median / bases[0]![1].median,
        target: `< ${target} ms`,
        met: m.median < target,
      });
    }
  };
  line(
    `one route's weekly rollup over ${DAYS} days (+ live today)`,
    weekly,
    6,
    [
      ['bare weekly GROUP BY over trip_outcomes', weeklyBase],
      ['same over trip_outcomes clustered by route', weeklyClustered],
      ['same over reliability_days', weeklyDays],
      ['same over the clustered table, prepared once', weeklyClusteredPrepared],
    ],
    1.3,
  );
  line(
    'all bus routes, daily for 28 days, rolling 7-day',
    daily,
    30,
    [
      ['bare daily + window over trip_outcomes', dailyBase],
      ['same over trip_outcomes clustered by route', dailyClustered],
      ['same over reliability_days', dailyDays],
    ],
    1.3,
  );
  line(`finalize one day (${TRIPS_PER_DAY} trips, ${OBS_PER_TRIP} obs/trip)`, finalize, 2000, [
    ["bare GROUP BY of the day's observations", finalizeBase],
  ]);
  console.log(
    `load average before/after the timed part: ${load0.map((x) => x.toFixed(2)).join(' ')} / ` +
      `${load1.map((x) => x.toFixed(2)).join(' ')} on 2 CPUs`,
  );
} finally {
  await db.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
