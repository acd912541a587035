// Every real captured feed in ../shared/fixtures-real through the whole pipeline (file:// feeds,
// no schedule), checked against the counts in that folder's README.
import t from 'tap';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InMemoryEventBus } from '../core/events.ts';
import type { FeedPoll } from '../core/types.ts';
import { captureLogs, silentLogger } from '../test/support/logs.ts';
import { createPipeline } from './ingest.ts';
import { FIXTURES_REAL, hasRealFixtures, MemoryHistory, testConfig } from '../test/support/pipeline-fakes.ts';

if (!hasRealFixtures()) {
  t.comment(`skipping: ${FIXTURES_REAL} is absent (real feed captures live beside the checkout)`);
  t.skip('no real fixtures', () => {});
} else {
  const files = ['caltrain', 'bart', 'mbta', 'sound-transit', 'bad'].flatMap((dir) =>
    readdirSync(join(FIXTURES_REAL, dir))
      .filter((f) => /\.pb(64)?$/.test(f))
      .map((f) => `${dir}/${f}`),
  );
  const feedId = (file: string) =>
    file
      .replace(/\.pb(64)?$/, '')
      .replace(/[^a-z0-9_-]/gi, '-')
      .slice(0, 60);
  const config = testConfig({
    feeds: files.map((file) => ({
      id: feedId(file),
      kind: 'gtfs-rt',
      url: pathToFileURL(join(FIXTURES_REAL, file)).href,
    })),
    // the captures are years old; this test checks decoding, not their age
    freshness: { stale_after_s: 90, expired_after_s: 300, max_future_s: 300, max_age_days: 36_500 },
  });
  const history = new MemoryHistory();
  const logs = captureLogs();
  const pipeline = createPipeline({
    config,
    bus: new InMemoryEventBus(),
    history,
    scheduleFor: () => undefined,
    log: logs.logger,
    now: () => Date.parse('2024-01-01T00:00:00Z'),
  });

  t.test('every capture decodes with the README counts; bad ones are rejected with their reason', async (t) => {
    const polls = await pipeline.pollAllOnce();
    t.equal(polls.length, files.length, `${files.length} feeds polled`);
    const byFile = new Map<string, FeedPoll>(polls.map((p) => [files.find((f) => feedId(f) === p.feed_id)!, p]));
    const batchOf = (file: string) => history.batches.find((b) => b.polls[0]!.feed_id === feedId(file))!;
    const poll = (file: string) => byFile.get(file)!;
    const rel = (file: string, relationship: string) =>
      batchOf(file).trips.filter((o) => o.source === 'trip_update' && o.relationship === relationship).length;

    t.match(poll('caltrain/ct-service-alerts.pb'), { status: 'ok', entities: 0 });
    t.match(poll('caltrain/ct-trip-updates.pb'), { status: 'ok', trip_updates: 19, rejected: {} });
    t.equal(batchOf('caltrain/ct-trip-updates.pb').arrivals.length, 220, '220 stop_time_updates');
    t.match(poll('caltrain/ct-vehicle-positions.pb'), { status: 'ok', vehicles: 14 });
    t.equal(batchOf('caltrain/ct-vehicle-positions.pb').vehicles.length, 14);

    t.match(poll('bart/bart-alerts.pb'), { status: 'ok', alerts: 1 });
    t.match(poll('bart/bart-trip-updates.pb'), { status: 'ok', trip_updates: 91 });
    t.equal(rel('bart/bart-trip-updates.pb', 'added'), 8, '8 ADDED');
    t.equal(batchOf('bart/bart-trip-updates.pb').arrivals.length, 1060, '1,060 stop_time_updates');
    t.match(poll('bart/example.pb'), { status: 'ok', trip_updates: 26 });
    t.equal(batchOf('bart/example.pb').arrivals.length, 298);

    t.match(poll('mbta/alerts.pb'), { status: 'ok', alerts: 51 });
    const mbtaAlerts = batchOf('mbta/alerts.pb').alertVersions;
    t.equal(mbtaAlerts.length, 51, 'one first version per alert');
    t.same(
      [...new Set(mbtaAlerts.flatMap((a) => a.modes))].sort(),
      ['bus', 'rail', 'streetcar'],
      'modes from informed route_types 0–3',
    );
    t.ok(mbtaAlerts.every((a) => a.id.startsWith(`${feedId('mbta/alerts.pb')}:`) && Object.keys(a.header).length > 0));
    t.match(poll('mbta/vehiclepositions.pb'), { status: 'ok', vehicles: 48 });
    t.equal(batchOf('mbta/vehiclepositions.pb').vehicles.length, 48);
    t.match(poll('mbta/tripupdates.pb'), { status: 'ok', trip_updates: 49 });
    t.equal(rel('mbta/tripupdates.pb', 'added'), 35, '35 ADDED');
    t.equal(batchOf('mbta/tripupdates.pb').arrivals.length, 523);

    const canceledFile = 'mbta/tripupdates-2022-02-01-canceled.pb';
    t.match(poll(canceledFile), { status: 'ok', trip_updates: 1479 });
    const observations = batchOf(canceledFile).trips.filter((o) => o.source === 'trip_update');
    t.equal(observations.length, 1479, 'one observation per trip');
    t.equal(rel(canceledFile, 'canceled'), 141, '141 CANCELED trips recorded');
    t.equal(rel(canceledFile, 'added'), 29, '29 ADDED');
    t.equal(
      observations.reduce((n, o) => n + o.skipped_stops, 0),
      2025,
      '2,025 SKIPPED stops recorded',
    );
    t.ok(observations.every((o) => o.service_date === '2022-02-01'));
    t.ok(
      observations.every((o) => !o.in_schedule),
      'no matching static feed',
    );

    for (const file of files.filter((f) => f.startsWith('sound-transit/'))) {
      const p = poll(file);
      t.equal(p.status, 'ok', file);
      t.ok(p.entities >= 14 && p.entities <= 15, `${file}: ${p.entities} entities`);
    }
    t.ok(rel('sound-transit/TripUpdate-DUPLICATED-1690679342.pb', 'duplicated') >= 1, 'DUPLICATED trips kept');
    t.ok(
      (poll('sound-transit/TripUpdate-DUPLICATED-1690679342.pb').rejected.duplicate_stop_time ?? 0) > 0,
      'its repeated stops counted',
    );

    t.match(poll('bad/not-protobuf.pb'), {
      status: 'decode_error',
      rejected: { not_protobuf: 1 },
      error: /invalid wire type/,
    });
    t.match(poll('bad/base64-instead-of-binary.pb64'), { status: 'decode_error', rejected: { base64_body: 1 } });
    t.match(poll('bad/header-timestamp-in-ms.pb'), {
      status: 'ok',
      rejected: { header_timestamp_ms: 1 },
      header_timestamp_ms: Date.parse('2023-11-08T01:10:01Z'),
    });
    // its one entity rejected, the poll is not ok (issue 13: honest rejection)
    t.match(poll('bad/latitude-out-of-range.pb'), {
      status: 'rejected',
      vehicles: 1,
      stored: 0,
      rejected: { lat_lon_out_of_range: 1 },
    });

    t.equal(history.polls.length, files.length, 'every poll, failed ones too, written to history');
    t.ok(
      logs.lines.some((l) => l.status === 'decode_error' && (l.rejected as Record<string, number>)?.not_protobuf === 1),
      'rejections logged',
    );
    t.ok(
      logs.lines.every((l) => !String(l.feed).includes('ct-trip-updates')),
      'clean polls are not logged',
    );
  });

  t.test('the pipeline keeps running after bad bodies: the next round polls every feed again', async (t) => {
    const again = await pipeline.pollAllOnce();
    const statuses = new Map(again.map((p) => [p.feed_id, p.status]));
    t.equal(statuses.get(feedId('mbta/alerts.pb')), 'unchanged', 'a processed file is unchanged');
    t.equal(statuses.get(feedId('bad/not-protobuf.pb')), 'decode_error', 'a bad body is not remembered as processed');
    const health = pipeline.state.feeds().find((h) => h.feed_id === feedId('bad/not-protobuf.pb'))!;
    t.match(health, { polls: 2, failures: 2, last_status: 'decode_error' });
    t.equal(pipeline.state.alerts().length, 52, 'MBTA 51 + BART 1');
    await pipeline.stop();
  });

  t.test("a vehicle feed without a schedule takes feeds[].mode: MBTA's 48 vehicles are buses", async (t) => {
    const file = 'mbta/vehiclepositions.pb';
    const modeConfig = testConfig({
      feeds: [{ id: 'mbta-vp', kind: 'gtfs-rt', url: pathToFileURL(join(FIXTURES_REAL, file)).href, mode: 'bus' }],
      freshness: config.freshness,
    });
    const modeHistory = new MemoryHistory();
    const modePipeline = createPipeline({
      config: modeConfig,
      bus: new InMemoryEventBus(),
      history: modeHistory,
      scheduleFor: () => undefined,
      log: silentLogger,
      now: () => Date.parse('2024-01-01T00:00:00Z'),
    });
    const [p] = await modePipeline.pollAllOnce();
    t.match(p, { status: 'ok', vehicles: 48, rejected: {} });
    const stored = modeHistory.batches[0]!.vehicles;
    t.equal(stored.length, 48);
    t.ok(
      stored.every((v) => v.mode === 'bus' && v.position_source === 'gps'),
      'stored with mode bus, their own GPS fixes',
    );
    t.equal(modePipeline.state.vehicles('bus').length, 48, 'in the live state under bus');
    t.ok(
      modeHistory.batches[0]!.trips.every((o) => o.mode === 'bus'),
      'the trips they run too',
    );
    await modePipeline.stop();
  });
}
