// Reliability for a past service day, through the real API: Caltrain's 2023-11-07, years before
// "today", read as the schedule's 104 trips once that evening's capture is ingested. The day is
// expanded on demand (the import only expanded around today) and finalized because it has
// observations; a day the capture does not cover says it has none instead of reading as zeros.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { reliabilityRoutes } from '../http/routes/reliability.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { FIXTURES_REAL, hasRealFixtures, testConfig } from './support/pipeline-fakes.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { importScheduleVersion } from '../store/schedule-refresh.ts';
import { bearer, startHarness } from './support/harness.ts';
import { silentLogger } from './support/logs.ts';

const DAY = '2023-11-07';
// the header of ct-trip-updates.pb is 2023-11-08T01:05:34Z: 17:05 on the 7th in California
const CAPTURED_AT = '2023-11-08T01:05:40Z';

interface Row {
  route_id: string;
  scheduled: number;
  delivered: number;
  unobserved: number;
  pending: number;
  final: boolean;
  days_observed: number;
}
interface Body {
  data: Row[];
  meta: { days_without_observations: string[]; notes: string[]; retained_window: { from: string } };
}

if (!hasRealFixtures()) {
  t.comment(`skipping: ${FIXTURES_REAL} is absent`);
  t.skip('no real fixtures', () => {});
} else {
  t.test('Caltrain 2023-11-07 through the API: the 104 scheduled trips of a past day', async (t) => {
    const h = await startHarness({
      quiet: true,
      routes: ({ db, config }) => reliabilityRoutes({ db, settings: config.reliability, windowMaxAgeMs: 0 }),
    });
    t.teardown(() => h.close());
    // requests are made today: the captured day is years in the past
    h.clock.now = Date.now();
    const { index } = await importScheduleVersion(h.db, 'ct', join(FIXTURES_REAL, 'caltrain', 'ct.zip'), {
      loadIndex: true,
    });
    const [expanded] = await h.db.all<{ n: number }>(
      `SELECT CAST(count(*) AS INTEGER) AS n FROM scheduled_trips WHERE service_date = DATE '${DAY}'`,
    );
    t.equal(expanded?.n, 0, 'the import expands the days around today, not 2023');

    // the capture ingested as it was polled then (the pipeline's clock at the capture time)
    const pipeline = createPipeline({
      config: testConfig({
        feeds: [
          {
            id: 'ct-tu',
            kind: 'gtfs-rt',
            url: pathToFileURL(join(FIXTURES_REAL, 'caltrain', 'ct-trip-updates.pb')).href,
            schedule_id: 'ct',
          },
        ],
      }),
      bus: new InMemoryEventBus(),
      history: createHistoryWriter(h.db),
      scheduleFor: () => index!,
      now: () => Date.parse(CAPTURED_AT),
      log: silentLogger,
    });
    const [poll] = await pipeline.pollAllOnce();
    await pipeline.stop();
    t.match(poll, { status: 'ok', trip_updates: 19 });

    const key = await h.key('max');
    const get = async (path: string): Promise<{ status: number; body: Body }> => {
      const res = await h.get(path, bearer(key));
      return { status: res.status, body: (await res.json()) as Body };
    };
    // the bus bridge runs only on closure weekends: every trip of the day is rail
    const lines = await h.db.all<{ route_id: string; mode: string }>(
      `SELECT route_id, mode FROM gtfs_routes WHERE schedule_id = 'ct' AND mode = 'rail' ORDER BY route_id`,
    );
    t.equal(lines.length, 8, 'eight rail lines');
    const rows: Row[] = [];
    for (const { route_id, mode } of lines) {
      const r = await get(`/api/v1/${mode}/${encodeURIComponent(route_id)}/reliability?from=${DAY}&to=${DAY}`);
      t.equal(r.status, 200, `${mode} ${route_id}`);
      t.same(r.body.meta.days_without_observations, [], `${route_id}: the day has observations`);
      rows.push(...r.body.data);
    }
    const sum = (k: 'scheduled' | 'delivered' | 'unobserved' | 'pending'): number => rows.reduce((a, r) => a + r[k], 0);
    t.equal(sum('scheduled'), 104, "the schedule's 104 trips of 2023-11-07");
    t.equal(sum('delivered'), 19, 'the 19 trips of the capture were seen running');
    t.equal(sum('unobserved') + sum('delivered'), 104, 'every other trip is unobserved: the day is over');
    t.equal(sum('pending'), 0);
    t.ok(
      rows.every((r) => r.final && r.days_observed === 1),
      'the past day with observations was finalized',
    );
    const [finalized] = await h.db.all<{ n: number }>(
      `SELECT CAST(count(*) AS INTEGER) AS n FROM reliability_finalized WHERE service_date = DATE '${DAY}'`,
    );
    t.equal(finalized?.n, 1);

    // the day after: covered by the schedule, no capture
    const next = await get(`/api/v1/rail/L1/reliability?from=2023-11-08&to=2023-11-08`);
    t.equal(next.status, 200);
    const [row] = next.body.data;
    t.match(row, { scheduled: Number, days_observed: 0, final: false });
    t.ok(
      row!.scheduled > 0 && row!.unobserved === row!.scheduled,
      `its ${row!.scheduled} L1 trips are expanded and unobserved, not zeros`,
    );
    t.same(next.body.meta.days_without_observations, ['2023-11-08']);
    t.match(next.body.meta.notes, [/No trip observations are recorded for service day 2023-11-08/]);
    const [notFinal] = await h.db.all<{ n: number }>(
      `SELECT CAST(count(*) AS INTEGER) AS n FROM reliability_finalized WHERE service_date = DATE '2023-11-08'`,
    );
    t.equal(notFinal?.n, 0, 'a day without observations is not finalized: a replay may still fill it');
  });
}
