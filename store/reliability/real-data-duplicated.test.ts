// Reliability over a real capture with DUPLICATED trips (Sound Transit Link).
import t from 'tap';
import { join } from 'node:path';
import { importGtfs } from '../gtfs-import.ts';
import { loadScheduleIndex } from '../schedule-index.ts';
import { finalizeServiceDay } from './finalize.ts';
import { FIXTURES, MISSING_FIXTURES, ingest } from '../../test/support/reliability-real-data.ts';
import { refreshScheduledTrips } from './scheduled-trips.ts';
import { openTestDb } from '../../test/support/reliability-builders.ts';

if (MISSING_FIXTURES) {
  t.plan(0, MISSING_FIXTURES);
} else {
  t.test('Sound Transit: a DUPLICATED trip is added service beside its original', async (t) => {
    const db = await openTestDb();
    t.teardown(() => db.close());
    await importGtfs(db, 'st', join(FIXTURES, 'sound-transit', 'st.zip'));
    const scheduled = await refreshScheduledTrips(db, 'st', '2023-07-29', '2023-07-29');
    t.ok(scheduled > 0);
    const index = await loadScheduleIndex(db, 'st');
    await ingest(db, 'sound-transit/TripUpdate-DUPLICATED-1690679342.pb', 'st', index, index.timezone);
    await finalizeServiceDay(db, '2023-07-29');
    const dup = await db.all<{ trip_id: string; in_schedule: boolean; outcome: string }>(
      `SELECT trip_id, in_schedule, outcome FROM trip_outcomes WHERE duplicated`,
    );
    t.same(dup, [{ trip_id: 'LLR_2023-03-18_Saturday_100479_2021', in_schedule: false, outcome: 'delivered' }]);
    const original = await db.all<{ outcome: string }>(`SELECT outcome FROM trip_outcomes
      WHERE trip_id = 'LLR_2023-03-18_Saturday_100479_2021' AND NOT duplicated`);
    t.same(original, [{ outcome: 'unobserved' }], 'the original (earlier that day) is not marked seen by its copy');
    const [day] = await db.all<{
      scheduled: number;
      added: number;
    }>(`SELECT CAST(sum(scheduled) AS INTEGER) AS scheduled,
      CAST(sum(added) AS INTEGER) AS added FROM reliability_days`);
    t.same(day, { scheduled, added: 1 }, 'the copy does not change the scheduled count');
  });
}
