// The `eventsource` npm package (the EventSource of Node clients) against the real server: reset
// and updates, reconnection after the server ends the stream, resume with no gap and no
// duplicate, also across a restart on the same DuckDB file, and reset for an id too old.
import { EventSource } from 'eventsource';
import t from 'tap';
import { until } from './support/wait.ts';
import { bearer } from './support/harness.ts';
import { openSse } from './support/sse-client.ts';
import { sortedData, StreamModel } from './support/stream-model.ts';
import { makeAlert } from './support/fake-live.ts';
import { seqEvent, startStreamHarness, type StreamHarness } from './support/streaming.ts';

// short lifetimes make the server end every stream about every 1.5 s; clients retry after 250 ms
const HUB = { retryMs: 250, maxConnectionMs: 1_500, sweepIntervalMs: 100 };

function withKey(key: string) {
  return {
    fetch: (input: string | URL | Request, init?: RequestInit) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string> | undefined), authorization: `Bearer ${key}` },
      }),
  };
}

/** Publishes numbered events every few ms until stopped. */
function publisher(h: StreamHarness, from = 0) {
  let next = from;
  let timer: NodeJS.Timeout | null = null;
  return {
    get next() {
      return next;
    },
    burst(n: number) {
      for (let i = 0; i < n; i++) h.publish(seqEvent(next++));
    },
    start() {
      timer ??= setInterval(() => h.publish(seqEvent(next++)), 15);
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

t.test('events stream: drops and a restart, resumed with no gap and no duplicate', async (t) => {
  const h = await startStreamHarness({ hub: HUB });
  t.teardown(() => h.close());
  const key = await h.key('max');
  const seqs: number[] = [];
  const ids: number[] = [];
  let opens = 0;
  let resets = 0;
  const es = new EventSource(`${h.url}/api/v1/events/stream?types=vehicle.position&mode=bus`, withKey(key));
  t.teardown(() => es.close());
  es.addEventListener('open', () => opens++);
  es.addEventListener('reset', () => resets++);
  es.addEventListener('vehicle.position', (e) => {
    seqs.push((JSON.parse(e.data) as { data: { seq: number } }).data.seq);
    ids.push(Number(e.lastEventId));
  });
  // events of another type or mode are filtered out on the server
  await until('the first connection', () => opens === 1);
  const pub = publisher(h);
  h.publish(seqEvent(-1, { type: 'alert.created' }));
  h.publish(seqEvent(-2, { modes: ['rail'] }));
  pub.start();
  await until('three server-side drops', () => opens >= 4);
  pub.stop();

  await h.restart();
  // published before the client is back: it must get them from the log the restart reloaded
  pub.burst(20);
  const opensBefore = opens;
  await until('reconnection after the restart', () => opens > opensBefore);
  pub.start();
  await until('two more drops', () => opens >= opensBefore + 3);
  pub.stop();
  await until('every event', () => seqs.at(-1) === pub.next - 1);

  t.same(
    seqs,
    Array.from({ length: pub.next }, (_, i) => i),
    `all ${pub.next} events, in order, none twice`,
  );
  t.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    'ids increase',
  );
  t.equal(resets, 0, 'every reconnection resumed');
  t.ok(h.streaming.hub.stats().closed.lifetime >= 2, 'the server ended streams by lifetime');
  t.same(h.errors, []);
});

t.test('an id older than the retained log gets reset and Last-Event-ID: earliest', async (t) => {
  const h = await startStreamHarness({ config: { sse: { event_log_size: 20 } }, hub: HUB });
  t.teardown(() => h.close());
  const key = await h.key('regular');
  const pub = publisher(h);
  pub.burst(1);
  await until('the first event logged', () => h.streaming.eventLog.latestId !== null);
  const oldest = h.streaming.eventLog.latestId!;
  pub.burst(49);
  await until('the log to roll over', () => (h.streaming.eventLog.earliestId ?? 0) > oldest);

  const raw = await openSse(`${h.url}/api/v1/events/stream?last_event_id=${oldest}`, bearer(key));
  t.teardown(() => raw.close());
  t.equal(raw.status, 200);
  t.equal(raw.headers.get('last-event-id'), 'earliest');
  await raw.waitFor((e) => e.length > 0);
  t.equal(raw.events[0]!.event, 'reset');
  t.same(JSON.parse(raw.events[0]!.data), {
    reason: 'last_event_id_unknown',
    earliest_id: String(h.streaming.eventLog.earliestId),
  });
  t.equal(raw.events[0]!.id, String(h.streaming.eventLog.latestId), 'the reset moves the client to the newest id');

  const got: Array<[string, string]> = [];
  const es = new EventSource(`${h.url}/api/v1/events/stream?last_event_id=${oldest}&api_key=${key}`);
  t.teardown(() => es.close());
  es.addEventListener('reset', (e) => got.push(['reset', e.lastEventId]));
  es.addEventListener('vehicle.position', (e) => got.push(['vehicle.position', e.lastEventId]));
  await until('the reset', () => got.length > 0);
  await raw.close();
  pub.burst(1);
  await until('a live event after the reset', () => got.length > 1);
  t.same(
    got.map(([type]) => type),
    ['reset', 'vehicle.position'],
  );
  t.ok(Number(got[1]![1]) > Number(got[0]![1]));
});

t.test('query stream: reset, then add/update/remove that keep a client equal to the JSON answer', async (t) => {
  const h = await startStreamHarness({ hub: HUB });
  t.teardown(() => h.close());
  const key = await h.key('regular');
  const path = '/api/v1/alerts?status=active,upcoming&limit=100';
  const json = async () =>
    (await fetch(`${h.url}${path}`, { headers: bearer(key) })).json() as Promise<{
      data: Array<Record<string, unknown>>;
    }>;
  const model = new StreamModel();
  let opens = 0;
  let firstReset: unknown = null;
  const es = new EventSource(`${h.url}${path}&format=sse`, withKey(key));
  t.teardown(() => es.close());
  es.addEventListener('open', () => opens++);
  for (const type of ['reset', 'add', 'update', 'remove'] as const) {
    es.addEventListener(type, (e) => {
      if (type === 'reset' && firstReset === null) firstReset = JSON.parse(e.data);
      model.apply(type, e.data, e.lastEventId);
    });
  }
  await until('the reset', () => model.resets === 1);
  t.same(firstReset, await json(), 'reset carries the JSON body of the same query');

  // each change edits one alert, adds one and removes the one added five changes before
  let n = 0;
  const change = () =>
    h.live.change((live) => {
      n++;
      const kept = live.alertList.filter((a) => a.id !== `alerts:new${n - 5}`);
      const edit = n % kept.length;
      live.alertList = [
        ...kept.map((a, i) => (i === edit ? { ...a, header: { en: `edited ${n}` }, version: a.version + 1 } : a)),
        makeAlert({ id: `alerts:new${n}`, status: 'active' }),
      ];
    });
  // bursts of three changes: the hub recomputes once per burst
  let bursts = 0;
  const timer = setInterval(() => {
    bursts++;
    for (let i = 0; i < 3; i++) change();
  }, 60);
  await until('three drops with changes in between', () => opens >= 4);
  clearInterval(timer);
  const expected = sortedData(await json());
  await until('the model to catch up', () => JSON.stringify(model.sorted()) === JSON.stringify(expected)).catch(
    () => undefined,
  );
  t.same(
    model.sorted(),
    expected,
    `after ${n} changes and ${opens - 1} reconnections the client holds the JSON answer`,
  );
  t.equal(model.resets, 1, 'reconnections resumed from the topic history, no second reset');
  t.ok(model.idsIncrease(), 'no event twice');
  t.ok(model.ids.length > n, 'add/update/remove events were delivered');
  const { computes } = h.streaming.hub.stats();
  t.ok(computes <= bursts + 2, `bursts collapse: ${computes} computes for ${n} changes in ${bursts} bursts`);
  t.same(h.errors, []);
});
