// What the public status document may say: configured alert feeds are alert sources from the
// start (quiet or failing), and feed and schedule errors reach it without URLs' secrets or paths.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import type { ScheduleHealth } from '../store/schedule-refresh.ts';
import { FakeLive, makeFeed } from '../test/support/fake-live.ts';
import { StatusCollector } from './collector.ts';
import { RequestStats } from './request-stats.ts';
import { renderSections } from './render.ts';

const T0 = Date.UTC(2024, 4, 7, 12, 0, 0);

function collector(feeds: unknown[], live: FakeLive, clock: { now: number }) {
  return new StatusCollector({
    live,
    config: parseConfig({ feeds, status: { tick_ms: 10_000 } }),
    requests: new RequestStats(clock.now, () => clock.now),
    store: null,
    clock: () => clock.now,
  });
}

t.test('a configured alerts feed is an alert source from its first poll', async (t) => {
  const clock = { now: T0 };
  const live = new FakeLive();
  const feeds = [
    { id: 'ct-vehicles', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/vehicle-positions.pb', interval_s: 10 },
    // named so by its URL, by its id, by the config; and one whose name misleads, said not to be
    { id: 'ct-rt', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/ct-service-alerts.pb', interval_s: 10 },
    { id: 'sa', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/feed?type=alerts', interval_s: 10 },
    { id: 'combined', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/all.pb', interval_s: 10, alerts: true },
    { id: 'alerts-archive', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/x.pb', interval_s: 10, alerts: false },
  ];
  const waiting = (id: string) =>
    makeFeed({ feed_id: id, polls: 0, last_poll_ms: null, last_success_ms: null, last_status: null, entities: 0 });
  live.feedList = feeds.map((f) => waiting(f.id));
  const c = collector(feeds, live, clock);

  let alerts = c.document().alerts;
  t.same(
    alerts.sources.map((s) => s.feed_id),
    ['ct-rt', 'sa', 'combined'],
    'listed before any poll, each by its own sign',
  );
  t.equal(alerts.state, 'unknown');
  t.equal(alerts.reason, 'waiting for the first poll');

  // first polls: every feed answers, the alert feeds with 0 entities (Caltrain's quiet feed)
  clock.now += 1_000;
  live.change((l) => {
    l.feedList = feeds.map((f) =>
      makeFeed({
        feed_id: f.id,
        polls: 1,
        last_poll_ms: clock.now,
        last_success_ms: clock.now,
        header_timestamp_ms: clock.now,
        entities: f.id === 'ct-vehicles' ? 14 : 0,
      }),
    );
  });
  c.tick();
  alerts = c.document().alerts;
  t.equal(alerts.state, 'operational', '0 alerts is operational');
  t.equal(alerts.reason, '3 sources polling normally');
  t.same(
    alerts.sources.map((s) => s.alerts),
    [0, 0, 0],
  );
  const html = renderSections(c.document(), clock.now).alerts;
  t.notMatch(html, /no alert sources configured/);

  // the alert feeds stop answering: down, not "no alert sources configured"
  clock.now += 25_000;
  live.change((l) => {
    l.feedList = l.feedList.map((h) =>
      h.feed_id === 'ct-vehicles'
        ? { ...h, polls: 4, last_poll_ms: clock.now, last_success_ms: clock.now, header_timestamp_ms: clock.now }
        : {
            ...h,
            polls: 4,
            failures: 3,
            last_poll_ms: clock.now,
            last_status: 'network_error',
            last_error: 'fetch failed',
          },
    );
  });
  c.tick();
  alerts = c.document().alerts;
  t.equal(alerts.state, 'down');
  t.match(alerts.reason, /^every alert source is down: ct-rt, sa, combined$/);
  t.match(renderSections(c.document(), clock.now).alerts, /every alert source is down/);

  // a reload that says the combined feed carries no alerts takes it off the list
  c.setFeeds(parseConfig({ feeds: feeds.map((f) => (f.id === 'combined' ? { ...f, alerts: false } : f)) }).feeds);
  c.tick();
  t.same(
    c.document().alerts.sources.map((s) => s.feed_id),
    ['ct-rt', 'sa'],
  );
});

t.test('without alert feeds, the old words stay true', async (t) => {
  const clock = { now: T0 };
  const live = new FakeLive();
  live.feedList = [makeFeed({ feed_id: 'bus', last_poll_ms: T0, last_success_ms: T0, header_timestamp_ms: T0 })];
  const c = collector([{ id: 'bus', kind: 'gtfs-rt', url: 'http://127.0.0.1:1/bus.pb' }], live, clock);
  t.equal(c.document().alerts.reason, 'no alert sources configured');
});

t.test('errors reach the document without secrets or local paths', async (t) => {
  const clock = { now: T0 };
  const live = new FakeLive();
  const tokenUrl = 'http://user:pa55word@127.0.0.1:9/feed.pb?token=FEEDSECRET#frag';
  const fileUrl = 'file:///srv/private-dir/agency-secret-feed.pb';
  const feeds = [
    { id: 'tokened', kind: 'gtfs-rt', url: tokenUrl, headers: { 'x-api-key': 'HEADERSECRET' } },
    { id: 'local', kind: 'gtfs-rt', url: fileUrl },
  ];
  const failing = (feed_id: string, last_error: string) =>
    makeFeed({
      feed_id,
      polls: 1,
      failures: 1,
      last_poll_ms: T0,
      last_success_ms: null,
      last_status: 'network_error',
      last_error,
    });
  live.feedList = [
    failing(
      'tokened',
      `Request cannot be constructed from a URL that includes credentials: ${tokenUrl} (key HEADERSECRET)`,
    ),
    failing('local', "ENOENT: no such file or directory, stat '/srv/private-dir/agency-secret-feed.pb'"),
  ];
  const c = collector(feeds, live, clock);
  const source = 'https://gtfs.example.org/ct.zip?token=SCHEDSECRET';
  const schedule: ScheduleHealth = {
    schedule_id: 'ct',
    source,
    refresh_cron: '41 3 * * *',
    version: null,
    last_check: {
      schedule_id: 'ct',
      source,
      etag: null,
      last_modified: null,
      sha256: null,
      checked_at: new Date(T0).toISOString(),
      outcome: 'failed',
      last_error: `GTFS download failed: ${source}: fetch failed: ECONNREFUSED`,
      last_error_at: new Date(T0).toISOString(),
      consecutive_failures: 1,
    },
  };
  c.setSchedules(() => [schedule]);
  clock.now += 25_000;
  c.tick();
  const doc = c.document();
  const [tokened, local] = doc.feeds;
  t.equal(local!.last_error, 'file not found');
  t.match(local!.reason, /file not found/);
  t.equal(tokened!.last_error, 'the URL holds a user name and password, which the HTTP client refuses (key (hidden))');
  t.equal(
    doc.schedules[0]!.last_error,
    'GTFS download failed: https://gtfs.example.org/ct.zip: fetch failed: connection refused',
  );
  t.match(doc.schedules[0]!.reason, /connection refused/);
  const everything = JSON.stringify(doc) + Object.values(renderSections(doc, clock.now)).join('');
  for (const secret of [
    'FEEDSECRET',
    'pa55word',
    'frag',
    'HEADERSECRET',
    'SCHEDSECRET',
    'private-dir',
    'agency-secret',
  ])
    t.notOk(everything.includes(secret), `${secret} is nowhere in the document or the page`);
});
