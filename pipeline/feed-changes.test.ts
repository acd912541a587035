// Feeds added, changed and removed on a running pipeline (config reload): each feed has its own
// poller, a removed feed's vehicles leave the live state and its alerts are resolved in history.
import t from 'tap';
import { until } from '../test/support/wait.ts';
import { InMemoryEventBus, type DomainEvent } from '../core/events.ts';
import type { FetchFn, RawFetch } from './fetch-feed.ts';
import { createPipeline } from './ingest.ts';
import { encodeFeed, header, MemoryHistory, testConfig } from '../test/support/pipeline-fakes.ts';
import { silentLogger } from '../test/support/logs.ts';

const nowS = () => Math.floor(Date.now() / 1000);

/** One vehicle named after the URL, and for ".../alerts" URLs one alert. */
function body(url: string): Uint8Array {
  const ts = nowS();
  const name = url.replace(/^.*\//, '');
  return encodeFeed({
    header: header(ts),
    entity: [
      {
        id: 'v',
        vehicle: { vehicle: { id: `veh-${name}` }, position: { latitude: 40, longitude: -73 }, timestamp: ts },
      },
      ...(name.startsWith('alerts')
        ? [{ id: 'al', alert: { header_text: { translation: [{ text: `alert ${name}` }] } } }]
        : []),
    ],
  });
}

t.test('feeds added, replaced and removed while polling', async (t) => {
  const requested: string[] = [];
  const fetch: FetchFn = async (feed): Promise<RawFetch> => {
    requested.push(feed.url);
    return { kind: 'body', body: body(feed.url), http_status: 200, etag: null, last_modified: null };
  };
  const feed = (id: string, url: string) =>
    testConfig({ feeds: [{ id, kind: 'gtfs-rt', url, interval_s: 0.05, backoff_max_s: 0.1 }] }).feeds[0]!;
  const config = testConfig({ feeds: [feed('a', 'http://feed.invalid/alerts-a')] });
  const history = new MemoryHistory();
  const bus = new InMemoryEventBus();
  const events: DomainEvent[] = [];
  bus.subscribe((batch) => events.push(...batch));
  const pipeline = createPipeline({ config, bus, history, scheduleFor: () => undefined, fetch, log: silentLogger });
  pipeline.start();
  t.teardown(() => pipeline.stop());
  const pollsOf = (id: string) => history.polls.filter((p) => p.feed_id === id).length;
  await until('feed a polled', () => pollsOf('a') >= 2);
  t.equal(pipeline.state.alerts().filter((a) => a.status === 'active').length, 1, 'feed a publishes an alert');

  pipeline.upsertFeed(feed('b', 'http://feed.invalid/b'));
  await until('the added feed polled', () => pollsOf('b') >= 2);
  t.same(
    pipeline.feeds().map((f) => f.id),
    ['a', 'b'],
  );
  t.same(
    pipeline.state.feeds().map((f) => f.feed_id),
    ['a', 'b'],
    'the live state knows both',
  );

  pipeline.upsertFeed(feed('b', 'http://feed.invalid/b2'));
  await until('the changed URL polled', () => requested.includes('http://feed.invalid/b2'));
  const afterChange = requested.length;
  await until('more polls', () => requested.length >= afterChange + 4);
  t.notOk(requested.slice(afterChange).includes('http://feed.invalid/b'), 'the old URL is not polled any more');

  await pipeline.removeFeed('a');
  const aPolls = pollsOf('a');
  await until('b keeps polling', () => pollsOf('b') >= 10);
  t.equal(pollsOf('a'), aPolls, 'the removed feed is not polled any more');
  t.same(
    pipeline.state.feeds().map((f) => f.feed_id),
    ['b'],
    'the removed feed left the live state',
  );
  t.equal(pipeline.state.feed('a'), undefined, 'with its vehicles and arrivals');
  t.same(
    pipeline.state.alerts().filter((a) => a.status !== 'resolved'),
    [],
    'its alert is resolved',
  );
  t.ok(
    history.batches.some((b) => b.alertVersions.some((a) => a.feed_id === 'a' && a.status === 'resolved')),
    'the resolved version is recorded, so a restart does not bring it back',
  );
  t.ok(events.some((e) => e.type === 'alert.resolved'));
  await t.rejects(pipeline.pollOnce('a'), /unknown feed "a"/);
  await pipeline.removeFeed('a'); // twice is nothing
});
