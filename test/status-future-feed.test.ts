// A feed whose header lies three years ahead, served for real: /status.json must not call it
// operational, and its reason must name the setting that governs it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { encodeFeed, header } from './support/pipeline-fakes.ts';
import { silentLogger } from './support/logs.ts';

interface FeedStatus {
  feed_id: string;
  state: string;
  reason: string;
  last_poll_status: string | null;
  last_error: string | null;
  freshness: string;
}

t.test('/status.json: a future-dated feed is not ok, and says why', async (t) => {
  const dir = t.testdir();
  const nowS = Math.floor(Date.now() / 1000);
  const feedFile = join(dir, 'future.pb');
  writeFileSync(
    feedFile,
    encodeFeed({
      header: header(nowS + 3 * 365 * 86_400),
      entity: [
        {
          id: '1',
          vehicle: { vehicle: { id: 'bus-1' }, trip: { route_id: '66' }, position: { latitude: 40, longitude: -73 } },
        },
      ],
    }),
  );
  const goodFile = join(dir, 'good.pb');
  writeFileSync(
    goodFile,
    encodeFeed({
      header: header(nowS),
      entity: [
        {
          id: '1',
          vehicle: {
            vehicle: { id: 'bus-2' },
            trip: { route_id: '66' },
            position: { latitude: 40, longitude: -73 },
            timestamp: nowS,
          },
        },
      ],
    }),
  );
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'transit.duckdb'),
    feeds: [
      { id: 'future', kind: 'gtfs-rt', url: pathToFileURL(feedFile).href, interval_s: 1 },
      { id: 'good', kind: 'gtfs-rt', url: pathToFileURL(goodFile).href, interval_s: 1 },
    ],
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    admin: { enabled: false },
    status: { tick_ms: 100 },
  });
  const service = await startService(config, { log: silentLogger });
  t.teardown(() => service.close());

  const feeds = async (): Promise<FeedStatus[]> =>
    ((await (await fetch(`${service.url}/status.json`)).json()) as { feeds: FeedStatus[] }).feeds;
  let seen: FeedStatus[] = [];
  for (let i = 0; i < 200; i++) {
    seen = await feeds();
    if (seen.every((f) => f.last_poll_status !== null)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const future = seen.find((f) => f.feed_id === 'future')!;
  const good = seen.find((f) => f.feed_id === 'good')!;
  t.equal(good.state, 'operational', 'the same machinery calls a good feed operational');
  t.equal(future.last_poll_status, 'rejected');
  t.not(future.state, 'operational');
  t.not(future.freshness, 'fresh');
  t.match(
    future.reason,
    /header timestamp \S+ is [\d,]+ s ahead of this server's clock, beyond freshness\.max_future_s \(300\)/,
  );
  t.match(future.last_error, /freshness\.max_future_s/);
});
