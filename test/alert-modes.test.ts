// Issue 15: an alert on a rail station that names no route was found by /alerts?station=S but
// not by /rail/alerts?station=S or /alerts?mode=rail&station=S. Through the real pieces: a GTFS
// imported into DuckDB, its in-memory schedule index, the GTFS-RT alert normalizer, the API.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AlertBook } from '../pipeline/alert-lifecycle.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import { RejectTally } from '../pipeline/normalize-context.ts';
import { normalizeFeedMessage } from '../pipeline/normalize-feed.ts';
import { encodeFeed, header, testConfig } from './support/pipeline-fakes.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { makeFeed } from './support/fake-live.ts';
import { bearer, startHarness } from './support/harness.ts';
import { demoLive, NOW } from './support/network.ts';
import { smallGtfs } from './support/small-gtfs.ts';

t.test('a station-only alert is found by the rail filters', async (t) => {
  // the small network plus a rail-only station: place-rail (platform RP1), served by line L1 alone
  const files = smallGtfs({ trips: 2, start: '20240101', end: '20241231' });
  files['stops.txt'] += 'place-rail,Rail Only,41.2,-87.2\nRP1,Rail Only platform 1,41.2,-87.2\n';
  files['stops.txt'] = files['stops.txt']!.replace(
    'stop_id,stop_name,stop_lat,stop_lon\n',
    'stop_id,stop_name,stop_lat,stop_lon,parent_station\n',
  )
    .split('\n')
    .map((line, i) => (i === 0 || line === '' ? line : line.startsWith('RP1,') ? `${line},place-rail` : `${line},`))
    .join('\n');
  files['stop_times.txt'] += 'L1-1,3,RP1,07:00:00,07:00:00\n';
  const dir = t.testdir();
  mkdirSync(join(dir, 'gtfs'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'gtfs', name), text);

  const live = demoLive();
  const h = await startHarness({ live });
  t.teardown(() => h.close());
  await importGtfs(h.db, 'small', join(dir, 'gtfs'));
  const schedule = await loadScheduleIndex(h.db, 'small');
  t.same(
    schedule.stationModes('place-rail'),
    ['rail'],
    'the store indexes the station by the routes calling at its platforms',
  );
  t.same(schedule.stationModes('S1'), ['rail', 'bus']);

  const nowS = Math.floor(NOW / 1000);
  const decoded = decodeFeedMessage(
    encodeFeed({
      header: header(nowS),
      entity: [
        {
          id: 'elevator',
          alert: {
            informed_entity: [{ stop_id: 'RP1' }],
            effect: 11,
            header_text: { translation: [{ text: 'Elevator out' }] },
          },
        },
      ],
    }),
  );
  if (!decoded.ok) throw new Error(decoded.error);
  const cfg = testConfig();
  const { alerts } = normalizeFeedMessage(decoded.message, {
    feed_id: 'small-alerts',
    observed_ms: NOW,
    schedule,
    timezone: 'UTC',
    freshness: cfg.freshness,
    delay: cfg.delay,
    rejects: new RejectTally(),
  });
  const [change] = new AlertBook().applyFeed('small-alerts', alerts, NOW);
  t.same(change!.alert.modes, ['rail']);
  live.change((l) => {
    l.alertList = [...l.alertList, change!.alert];
    l.feedList = [...l.feedList, makeFeed({ feed_id: 'small-alerts' })];
  });

  const key = await h.key('max');
  const ids = async (path: string) => {
    const r = await h.get(path, bearer(key));
    t.equal(r.status, 200, path);
    return ((await r.json()) as { data: Array<{ id: string }> }).data.map((a) => a.id);
  };
  t.same(await ids('/api/v1/alerts?station=place-rail'), ['small-alerts:elevator']);
  t.same(await ids('/api/v1/rail/alerts?station=place-rail'), ['small-alerts:elevator'], '/rail/alerts?station=');
  t.same(
    await ids('/api/v1/alerts?mode=rail&station=place-rail'),
    ['small-alerts:elevator'],
    '/alerts?mode=rail&station=',
  );
  t.same(await ids('/api/v1/bus/alerts?station=place-rail'), [], 'not a bus alert');
});
