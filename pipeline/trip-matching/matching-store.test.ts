// Trip matching end to end: NYCT-style schedules imported by store/ (ids that embed origin and
// path, or an `mta_trip_id` column), realtime feeds with NYCT ids and the NYCT extension, and
// trips past midnight published with the calendar date, through the pipeline into DuckDB.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryEventBus } from '../../core/events.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import type { FeedPoll } from '../../core/types.ts';
import { Db } from '../../store/db.ts';
import { importGtfs } from '../../store/gtfs-import.ts';
import { createHistoryWriter } from '../../store/history-writer.ts';
import { loadScheduleIndex } from '../../store/schedule-index.ts';
import { writeFeedFolder } from '../../test/support/gtfs-fixture.ts';
import {
  MONDAY,
  MONDAY_MORNING_MS,
  nyctColumnGtfs,
  nyctEmbeddedGtfs,
  nyctMorningFeed,
  pastMidnightFeed,
  TUESDAY_NIGHT_MS,
} from '../../test/support/nyct-gtfs.ts';
import { createPipeline } from '../ingest.ts';
import { encodeFeed, header, testConfig } from '../../test/support/pipeline-fakes.ts';
import { silentLogger } from '../../test/support/logs.ts';
import { recentPolls } from '../../test/support/stored-history.ts';

const dir = mkdtempSync(join(tmpdir(), 'trip-matching-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function pollWith(
  db: Db,
  schedule: ScheduleIndex,
  body: Uint8Array,
  nowMs: number,
  tripMatching?: unknown,
): Promise<FeedPoll> {
  const pipeline = createPipeline({
    config: testConfig({
      feeds: [
        {
          id: 'subway',
          kind: 'gtfs-rt',
          url: 'http://nyct.invalid/',
          schedule_id: 'nyct',
          trip_matching: tripMatching,
        },
      ],
    }),
    bus: new InMemoryEventBus(),
    history: createHistoryWriter(db),
    scheduleFor: () => schedule,
    now: () => nowMs,
    log: silentLogger,
    fetch: async () => ({ kind: 'body', body, http_status: 200, etag: null, last_modified: null }),
  });
  try {
    return await pipeline.pollOnce('subway');
  } finally {
    await pipeline.stop();
  }
}

for (const [variant, files] of [
  ['trip ids that embed origin and path', nyctEmbeddedGtfs()],
  ['an mta_trip_id column', nyctColumnGtfs()],
] as const) {
  t.test(`NYCT schedule with ${variant}`, async (t) => {
    const db = await Db.open(':memory:');
    t.teardown(() => db.close());
    const summary = await importGtfs(db, 'nyct', writeFeedFolder(join(dir, variant.replace(/\W+/g, '-')), files));
    t.same(summary.warnings, []);
    const schedule = await loadScheduleIndex(db, 'nyct');
    const isColumn = variant.includes('column');
    const staticId = (embedded: string, column: string) => (isColumn ? column : embedded);

    const morning = await pollWith(db, schedule, nyctMorningFeed(), MONDAY_MORNING_MS + 2_000);
    t.same(
      morning.matching,
      {
        trips: 5,
        matched: 3,
        unmatched: 1,
        ambiguous: 1,
        previous_day: 0,
        match_rate: 0.6,
        strategies: {
          exact: { matched: 0, unmatched: 5, ambiguous: 0 },
          nyct: { matched: 3, unmatched: 1, ambiguous: 1 },
          nyct_loose: { matched: 0, unmatched: 1, ambiguous: 1 },
        },
      },
      'each path finds its own trip; no path between two paths is ambiguous; an unknown origin is unmatched ' +
        '(06:39, 29 minutes after the 06:10 1 train, but that one runs under its own id)',
    );
    const observed = await db.all<{ trip_id: string; service_date: string; in_schedule: boolean }>(
      `SELECT trip_id, strftime(service_date, '%Y-%m-%d') AS service_date, in_schedule FROM trip_observations ` +
        `ORDER BY trip_id`,
    );
    t.same(
      observed
        .filter((o) => o.in_schedule)
        .map((o) => [o.trip_id, o.service_date])
        .sort(),
      [
        [staticId('AFA24GEN-1037-Weekday-00_037000_1..N03R', '1-0610'), MONDAY],
        [staticId('AFA24GEN-2043-Weekday-00_036050_2..S07R', '2-0600-a'), MONDAY],
        [staticId('AFA24GEN-2043-Weekday-00_036050_2..S08R', '2-0600-b'), MONDAY],
      ].sort(),
      "matched trips carry the schedule's trip id",
    );
    t.same(
      observed
        .filter((o) => !o.in_schedule)
        .map((o) => o.trip_id)
        .sort(),
      ['036050_2..S', '039900_1..N03R'],
      "the rest keep the feed's id",
    );
    const feedIds = await db.all<{ trip_id: string; feed_trip_id: string | null }>(
      `SELECT DISTINCT trip_id, feed_trip_id FROM arrivals ORDER BY ALL`,
    );
    t.same(
      feedIds.map((r) => [r.trip_id, r.feed_trip_id]).sort(),
      [
        [staticId('AFA24GEN-1037-Weekday-00_037000_1..N03R', '1-0610'), '037000_1..N03R'],
        [staticId('AFA24GEN-2043-Weekday-00_036050_2..S07R', '2-0600-a'), '036050_2..S07R'],
        [staticId('AFA24GEN-2043-Weekday-00_036050_2..S08R', '2-0600-b'), '036050_2..S08R'],
        ['036050_2..S', null],
        ['039900_1..N03R', null],
      ].sort(),
      "the feed's own id beside the schedule's (null where they are one)",
    );
    t.same(
      await db.all(`SELECT DISTINCT trip_id, feed_trip_id FROM trip_observations ORDER BY ALL`),
      [...feedIds].sort((a, b) => (a.trip_id < b.trip_id ? -1 : 1)),
      'trip observations too',
    );
    const delays = await db.all<{ trip_id: string; delay_s: number }>(
      `SELECT trip_id, delay_s FROM arrivals WHERE in_schedule ORDER BY trip_id`,
    );
    t.same(delays.map((d) => d.delay_s).sort(), [0, 30, 60], 'scheduled times from the matched trips');

    const night = await pollWith(db, schedule, pastMidnightFeed(), TUESDAY_NIGHT_MS + 2_000);
    t.same(
      night.matching,
      {
        trips: 4,
        matched: 4,
        unmatched: 0,
        ambiguous: 0,
        previous_day: 4,
        match_rate: 1,
        strategies: {
          exact: { matched: 2, unmatched: 1, ambiguous: 0 },
          nyct: { matched: 1, unmatched: 0, ambiguous: 0 },
          start: { matched: 1, unmatched: 0, ambiguous: 0 },
        },
      },
      "every trip past 24:00 of Monday, published as Tuesday, is Monday's (the id-less bus by start time)",
    );
    const late = await db.all<{ trip_id: string; service_date: string; delay_s: number; scheduled: string }>(
      `SELECT trip_id, strftime(service_date, '%Y-%m-%d') AS service_date, delay_s,
        strftime(scheduled_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M') AS scheduled
       FROM arrivals WHERE observed_at = to_timestamp(${(TUESDAY_NIGHT_MS + 2_000) / 1000}) ORDER BY trip_id`,
    );
    t.same(
      late,
      [
        {
          trip_id: staticId('AFA24GEN-1037-Weekday-00_145000_1..N03R', '1-2410'),
          service_date: MONDAY,
          delay_s: 60,
          scheduled: '2024-05-07T04:12',
        },
        { trip_id: 'B44-late', service_date: MONDAY, delay_s: 60, scheduled: '2024-05-07T04:40' },
        { trip_id: 'B44-late2', service_date: MONDAY, delay_s: 60, scheduled: '2024-05-07T05:00' },
        { trip_id: 'B44-monday-late', service_date: MONDAY, delay_s: 120, scheduled: '2024-05-07T05:10' },
      ],
      "Monday's service date and scheduled times: delays of a minute, not −86,400 s",
    );
    t.equal(
      await db.all(`SELECT 1 FROM trip_observations WHERE service_date = DATE '2024-05-07'`).then((r) => r.length),
      0,
      "no observation on Tuesday's service",
    );

    const stored = await recentPolls(db, 'subway', 0);
    t.same(
      stored.map((p) => p.matching),
      [morning.matching, night.matching],
      'the counts are stored with each poll',
    );
  });
}

t.test('a feed set to one strategy tries only that one', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'nyct', writeFeedFolder(join(dir, 'exact-only'), nyctEmbeddedGtfs()));
  const schedule = await loadScheduleIndex(db, 'nyct');
  const exact = await pollWith(db, schedule, nyctMorningFeed(), MONDAY_MORNING_MS + 2_000, 'exact');
  t.same(exact.matching, {
    trips: 5,
    matched: 0,
    unmatched: 5,
    ambiguous: 0,
    previous_day: 0,
    match_rate: 0,
    strategies: { exact: { matched: 0, unmatched: 5, ambiguous: 0 } },
  });
  const nyctOnly = await pollWith(db, schedule, nyctMorningFeed(), MONDAY_MORNING_MS + 3_000, ['nyct']);
  t.same(nyctOnly.matching?.strategies, { nyct: { matched: 3, unmatched: 1, ambiguous: 1 } });
});

t.test('a train behind the published timetable, through the store', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await importGtfs(db, 'nyct', writeFeedFolder(join(dir, 'loose'), nyctEmbeddedGtfs()));
  const schedule = await loadScheduleIndex(db, 'nyct');
  const at = MONDAY_MORNING_MS + 600_000;
  // 06:05:30 on path 07R: no 2 train leaves then; the 06:00:30 on 07R left 300 s earlier
  const body = encodeFeed({
    header: header(at / 1000),
    entity: [
      {
        id: 'L',
        trip_update: {
          trip: { trip_id: '036550_2..S07R', route_id: '2', start_date: '20240506' },
          stop_time_update: [{ stop_id: '204S', arrival: { time: Date.parse('2024-05-06T10:08:00Z') / 1000 } }],
        },
      },
    ],
  });
  const poll = await pollWith(db, schedule, body, at + 2_000);
  t.match(poll.matching, {
    trips: 1,
    matched: 1,
    strategies: { nyct: { unmatched: 1 }, nyct_loose: { matched: 1, unmatched: 0, ambiguous: 0 } },
  });
  t.same(
    await db.all(`SELECT trip_id, feed_trip_id, delay_s, in_schedule FROM arrivals`),
    [
      {
        trip_id: 'AFA24GEN-2043-Weekday-00_036050_2..S07R',
        feed_trip_id: '036550_2..S07R',
        delay_s: 330,
        in_schedule: true,
      },
    ],
    "five minutes behind the 06:00:30: that trip's id and times, the feed's id beside them",
  );
  t.same(
    await recentPolls(db, 'subway', 0).then((p) => p.map((x) => x.matching)),
    [poll.matching],
    'stored with the poll',
  );
});
