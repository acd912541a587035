// Per-slice versions (issue 15): the REST response cache and the live topics key on the slices of
// the live state they read, so an unchanged poll keeps cached bodies (same ETag, no recompute)
// and a change in one slice invalidates only the bodies and topics built from it.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import type { DomainEvent, EventBus } from '../core/events.ts';
import { LIVE_SLICES } from '../core/ports.ts';
import { newPoll, type FeedPoll, type VehiclePosition } from '../core/types.ts';
import { createApi } from '../app/api.ts';
import { createKey } from '../accounts/keys.ts';
import { Directory } from '../http/read/directory.ts';
import { liveChannel, streamKindOf } from '../http/sse-routes.ts';
import type { NormalizedPoll } from '../pipeline/normalize-feed.ts';
import { LiveState } from '../pipeline/state.ts';
import { Db } from '../store/db.ts';
import { VersionWatch } from '../stream/version-watch.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const bus: EventBus = { publish: (_e: DomainEvent) => undefined, subscribe: () => () => undefined };
const config = parseConfig({
  signing_secret: 'test-secret-0123456789abcdef',
  feeds: [
    { id: 'vp', kind: 'gtfs-rt', url: 'http://x/vp', mode: 'bus' },
    { id: 'al', kind: 'gtfs-rt', url: 'http://x/al' },
  ],
});

const poll = (feedId: string, at: number, status: FeedPoll['status'] = 'ok'): FeedPoll => ({
  ...newPoll(feedId, at, status),
  http_status: status === 'unchanged' ? 304 : 200,
  bytes: 1,
  duration_ms: 1,
  header_timestamp_ms: at,
  entities: 1,
});
const rows = (at: number, extra: Partial<NormalizedPoll>): NormalizedPoll => ({
  header_timestamp_ms: at,
  entities: 1,
  vehicle_entities: 0,
  trip_update_entities: 0,
  alert_entities: 0,
  vehicles: [],
  arrivals: [],
  trips: [],
  alerts: [],
  rejected: {},
  matching: null,
  ...extra,
});
const vehicle = (id: string, lat: number, at: number): VehiclePosition => ({
  feed_id: 'vp',
  vehicle_id: id,
  route_id: '66',
  trip_id: null,
  mode: 'bus',
  lat,
  lon: -71,
  position_source: 'gps',
  bearing: null,
  speed_mps: null,
  stop_id: null,
  current_status: null,
  timestamp_ms: at,
  observed_ms: at,
});
const alert = (header: string) => ({
  id: 'al:1',
  feed_id: 'al',
  entity_id: '1',
  modes: ['bus' as const],
  impact: 'detour',
  cause: 'construction',
  severity: null,
  header: { en: header },
  description: {},
  url: {},
  active_periods: [],
  routes: ['66'],
  stations: [],
  trips: [],
});

t.test('REST: an unchanged poll keeps cached bodies; a change in one slice invalidates only its bodies', async (t) => {
  let clock = NOW;
  const live = new LiveState({ config, bus, now: () => clock });
  live.applyPoll(poll('al', clock), rows(clock, { alerts: [alert('Detour')] }));
  live.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('a', 42.1, clock)] }));
  const db = await Db.open(':memory:');
  const api = await createApi({ db, live, config, clock: () => clock, directory: new Directory() });
  t.teardown(async () => {
    await api.handler.close();
    await db.close();
  });
  const { key } = await createKey(db, { plan: 'max' });
  const get = (url: string, etag?: string) =>
    api.handler.inject({
      url,
      headers: { authorization: `Bearer ${key}`, ...(etag ? { 'if-none-match': etag } : {}) },
    });
  const stats = () => ({ ...api.handler.chain.cacheStats });

  const first = await get('/api/v1/alerts');
  t.equal(first.status, 200);
  const etag = first.headers.etag!;
  const busFirst = await get('/api/v1/bus/realtime');
  t.equal(busFirst.json<{ data: unknown[] }>().data.length, 1);

  // an unchanged poll of the vehicle feed, then a poll bringing new positions: neither touches alerts
  clock += 15_000;
  live.applyPoll(poll('vp', clock, 'unchanged'));
  clock += 15_000;
  live.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('a', 42.2, clock)] }));
  const before = stats();
  const again = await get('/api/v1/alerts');
  t.equal(again.headers.etag, etag, 'same ETag after polls of a feed without alerts');
  t.equal(again.body, first.body);
  t.same(stats(), { ...before, hits: before.hits + 1 }, 'served from the cache: no recompute');
  t.equal((await get('/api/v1/alerts', etag)).status, 304, 'a revalidation is still a 304');

  const busAgain = await get('/api/v1/bus/realtime');
  t.not(busAgain.headers.etag, busFirst.headers.etag, 'the vehicles slice moved: the bus body is recomputed');
  t.match(busAgain.json(), { data: [{ vehicle_id: 'a', lat: 42.2 }] });

  // an unchanged poll of the alerts feed moves only that feed's health (its last poll is in the body)
  clock += 15_000;
  live.applyPoll(poll('al', clock, 'unchanged'));
  const polled = await get('/api/v1/alerts');
  t.not(polled.headers.etag, etag, "the alert feed's own poll time is part of the body");
  t.same(
    polled.json<{ data: unknown[] }>().data,
    first.json<{ data: unknown[] }>().data,
    'the alerts themselves are the same',
  );
  const cachedAgain = stats();
  t.equal((await get('/api/v1/alerts')).headers.etag, polled.headers.etag);
  t.equal(stats().hits, cachedAgain.hits + 1, 'and cached again until the next change');

  // a changed alert invalidates the alert bodies
  clock += 15_000;
  live.applyPoll(poll('al', clock), rows(clock, { alerts: [alert('Detour moved')] }));
  const changed = await get('/api/v1/alerts');
  t.match(changed.json(), { data: [{ header: { en: 'Detour moved' }, version: 2 }] });
});

t.test('streams: each slice is its own change channel; a topic recomputes only with the slices it reads', async (t) => {
  let clock = NOW;
  const live = new LiveState({ config, bus, now: () => clock });
  const moved: string[][] = [];
  const watch = new VersionWatch({
    sources: LIVE_SLICES.map((slice) => ({ channel: liveChannel(slice), read: () => live.sliceVersion(slice) })),
    onChange: (channels) => moved.push([...channels].sort()),
  });
  live.applyPoll(poll('al', clock), rows(clock, { alerts: [alert('Detour')] }));
  live.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('a', 42.1, clock)] }));
  watch.check();
  moved.length = 0;

  clock += 1_000;
  live.applyPoll(poll('vp', clock, 'unchanged'));
  t.same(watch.check(), ['live:feeds'], 'an unchanged poll moves feed health only');
  live.applyPoll(poll('vp', clock), rows(clock, { vehicles: [vehicle('a', 42.2, clock)] }));
  t.same(watch.check().sort(), ['live:feeds', 'live:vehicles:bus'], 'new positions move the bus vehicles');
  live.applyPoll(poll('al', clock), rows(clock, { alerts: [alert('Detour')] }));
  t.same(watch.check(), ['live:feeds'], 'the same alerts again move nothing but health');

  const alertTopic = streamKindOf({ id: 'listAlerts', path: '/api/v1/alerts' }).channels;
  const busTopic = streamKindOf({ id: 'getBusRealtime', path: '/api/v1/bus/realtime' }).channels;
  const streetcarTopic = streamKindOf({ id: 'getStreetcarRealtime', path: '/api/v1/streetcar/realtime' }).channels;
  const hits = (topic: readonly string[]) => moved.filter((channels) => channels.some((c) => topic.includes(c))).length;
  t.equal(hits(alertTopic), 0, 'no alert topic recomputed by vehicle polls');
  t.equal(hits(busTopic), 1, 'the bus topic recomputed once, for the new positions');
  t.equal(hits(streetcarTopic), 0, 'the streetcar topic not at all');
});
