// Replay: archived snapshots of one day, named and placed out of order, through a real pipeline
// into a DuckDB file; then the same archive again.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { InMemoryEventBus } from '../core/events.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { loadWrittenTrips } from '../store/stop-events-writer.ts';
import { readHeaderTimestamp } from './decode.ts';
import { createPipeline } from './ingest.ts';
import { listFiles, replaySnapshots, scanSnapshots } from './replay.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';
import { silentLogger } from '../core/logger.ts';

const DAY = '2024-05-02';
const at = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`) / 1000;
const schedule = fakeSchedule({
  routes: [{ route_id: 'r1', route_type: 3 }],
  trips: [
    { trip_id: 'T1', route_id: 'r1' },
    { trip_id: 'T2', route_id: 'r1' },
  ],
  stopTimes: {
    T1: [
      ['A', '08:00:00'],
      ['B', '08:20:00'],
    ],
    T2: [
      ['A', '09:00:00'],
      ['B', '09:20:00'],
    ],
  },
});

/** T1 runs late, then T2 is canceled, then T2 is scheduled again: order decides the outcome. */
function snapshot(tsS: number, t2: 'scheduled' | 'canceled' | null, delayS: number): Uint8Array {
  const entity: Record<string, unknown>[] = [
    {
      id: 'T1',
      trip_update: {
        trip: { trip_id: 'T1', start_date: '20240502' },
        stop_time_update: [{ stop_sequence: 2, arrival: { delay: delayS } }],
      },
    },
  ];
  if (t2)
    entity.push({
      id: 'T2',
      trip_update: {
        trip: { trip_id: 'T2', start_date: '20240502', schedule_relationship: t2 === 'canceled' ? 3 : 0 },
      },
    });
  // an ADDED trip: looked up, not in the schedule
  entity.push({
    id: 'X',
    trip_update: {
      trip: { trip_id: 'EXTRA-1', start_date: '20240502', schedule_relationship: 1 },
      stop_time_update: [{ stop_id: 'A', arrival: { time: tsS + 60 } }],
    },
  });
  return encodeFeed({ header: header(tsS), entity });
}

t.test('the header timestamp is read off the wire without decoding entities', async (t) => {
  t.equal(readHeaderTimestamp(snapshot(at('08:05'), null, 0)), at('08:05'));
  t.equal(readHeaderTimestamp(encodeFeed({ header: { gtfs_realtime_version: '2.0' }, entity: [] })), null);
  t.equal(readHeaderTimestamp(new TextEncoder().encode('not valid pb data')), undefined);
});

t.test('a replay of several snapshots of one day given out of order', async (t) => {
  const dir = t.testdir();
  const archive = join(dir, 'archive');
  mkdirSync(join(archive, 'later'), { recursive: true });
  // names sort against time: z is the oldest, a the newest; one sits in a subfolder
  writeFileSync(join(archive, 'z-first.pb'), snapshot(at('08:05'), 'scheduled', 60));
  writeFileSync(join(archive, 'later', 'b.bin'), snapshot(at('08:25'), 'scheduled', 240));
  writeFileSync(join(archive, 'm-second'), snapshot(at('08:15'), 'canceled', 120));
  writeFileSync(join(archive, 'a-last.pb'), snapshot(at('09:30'), 'scheduled', 0));
  writeFileSync(join(archive, 'no-time.pb'), encodeFeed({ header: { gtfs_realtime_version: '2.0' }, entity: [] }));
  writeFileSync(join(archive, 'notes.txt'), 'not a feed');
  writeFileSync(join(archive, '.hidden.pb'), snapshot(at('07:00'), null, 0));

  const db = await Db.open(join(dir, 'transit.duckdb'));
  t.teardown(() => db.close());
  const replay = async () => {
    // as the runtime does: trips stored before resume after their last stop stored
    const written = await loadWrittenTrips(db, '2024-05-01', '2024-05-03');
    const pipeline = createPipeline({
      written_trips: written,
      config: testConfig({
        feeds: [{ id: 'tu', kind: 'gtfs-rt', url: 'http://archive.invalid/', allow_old_snapshots: true }],
      }),
      bus: new InMemoryEventBus(),
      history: createHistoryWriter(db),
      scheduleFor: () => schedule,
      log: silentLogger,
    });
    const order: string[] = [];
    const progress: number[] = [];
    const scan = scanSnapshots(listFiles([archive]));
    const summary = await replaySnapshots(pipeline, 'tu', scan, {
      onSnapshot: (_poll, s) => order.push(s.path.slice(archive.length + 1)),
      onProgress: (done) => progress.push(done),
    });
    await pipeline.stop();
    return { summary, order, progress };
  };

  const first = await replay();
  t.same(first.order, ['z-first.pb', 'm-second', 'later/b.bin', 'a-last.pb'], 'header-time order, whatever the names');
  t.same(first.progress, [1, 2, 3, 4]);
  t.match(first.summary, {
    files: 6,
    snapshots: 4,
    outcomes: { ok: 4 },
    skipped: { missing_header_timestamp: 1, not_protobuf: 1 },
    rejected: {},
    first_header_ms: at('08:05') * 1000,
    last_header_ms: at('09:30') * 1000,
    matching: { trips: 12, matched: 8, unmatched: 4, ambiguous: 0 }, // 3 trips per snapshot, the added one unmatched
  });
  t.ok(first.summary.rows_stored > 0 && first.summary.snapshots_per_s > 0 && first.summary.rows_per_s > 0);
  t.same(
    first.summary.findings,
    // per snapshot: no timestamps nor vehicles (W001, W002 ×3), T1's and X's relationship (W009 ×2),
    // T2 scheduled with no updates (E041), X's stop A (E011: the schedule lists no stops); 10 minutes
    // or more between headers after the first (W007)
    { E011: 4, E041: 3, W001: 12, W002: 12, W007: 3, W009: 8 },
    'the feed rules of every snapshot replayed',
  );

  const observations = await db.json<{ trip_id: string; relationship: string; observed_at: string; day: string }>(
    `SELECT trip_id, relationship, observed_at, strftime(service_date, '%Y-%m-%d') AS day FROM trip_observations
     WHERE trip_id = 'T2' ORDER BY observed_at`,
  );
  t.same(
    observations.map((o) => [o.relationship, o.observed_at, o.day]),
    [
      ['scheduled', '2024-05-02 08:05:00+00', DAY],
      ['canceled', '2024-05-02 08:15:00+00', DAY],
      ['scheduled', '2024-05-02 08:25:00+00', DAY],
      ['scheduled', '2024-05-02 09:30:00+00', DAY],
    ],
    'each snapshot observed at its own header time, so the cancellation sits between the observations around it',
  );
  t.same(
    await db.json(`SELECT strftime(polled_at, '%H:%M') AS at, status FROM feed_polls ORDER BY polled_at`),
    ['08:05', '08:15', '08:25', '09:30'].map((hhmm) => ({ at: hhmm, status: 'ok' })),
  );
  t.same(await db.json(`SELECT DISTINCT source FROM feed_snapshots`), [{ source: 'replay' }]);

  const events = await db.json<{ trip_id: string; stop_id: string; source: string }>(
    `SELECT trip_id, stop_id, source FROM stop_events ORDER BY written_at, trip_id`,
  );
  t.equal(events.length, first.summary.stop_events.written, 'every stop event counted is stored');
  t.ok(
    events.some((e) => e.trip_id === 'T1' && e.stop_id === 'B'),
    "T1's last stop, reached by its prediction",
  );

  const rows = Number((await db.all<{ n: bigint }>('SELECT count(*) AS n FROM arrivals'))[0]!.n);
  const again = await replay();
  t.match(
    again.summary,
    { snapshots: 4, outcomes: { duplicate: 4 }, rows_stored: 0, stop_events: { written: 0 } },
    'the same archive again stores nothing',
  );
  t.equal(Number((await db.all<{ n: bigint }>('SELECT count(*) AS n FROM stop_events'))[0]!.n), events.length);
  t.equal(Number((await db.all<{ n: bigint }>('SELECT count(*) AS n FROM arrivals'))[0]!.n), rows);
});
