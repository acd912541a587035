// HubStreams through inject(): item extraction, re-rendering at the current time, the allowance
// slot and the meter following the hub's subscription, failures before a stream opens.
import t from 'tap';
import { z } from 'zod';
import { ApiError } from '../core/errors.ts';
import { StreamAllowance } from '../stream/allowance.ts';
import { ConnectionMeter } from '../stream/connection-meter.ts';
import { MemoryEventLog } from '../stream/event-log.ts';
import { StreamHub } from '../stream/hub.ts';
import { RequestHandler } from './request-handler.ts';
import type { AuthenticatedKey, KeyAuthenticator } from '../accounts/auth.ts';
import { CursorCodec } from './cursor.ts';
import { SlidingWindowLimiter } from '../accounts/limiter.ts';
import { defineRoute } from './route.ts';
import { eventRoutes } from './routes/events.ts';
import { connectionMinutes, HubStreams, liveChannel, snapshotOf, streamKindOf, type StreamTag } from './sse-routes.ts';
import type { StreamSink, StreamWriteResult } from './types.ts';
import { silentLogger } from '../test/support/logs.ts';
import { MemoryMeter } from '../test/support/meter.ts';

t.test('item type and channels follow the route', async (t) => {
  t.same(streamKindOf({ id: 'a', path: '/api/v1/bus/alerts' }), {
    itemType: 'alert',
    channels: ['live:alerts', 'live:freshness'],
  });
  t.same(streamKindOf({ id: 'a', path: '/api/v1/rail/realtime' }), {
    itemType: 'arrival',
    channels: ['live:arrivals', 'live:vehicles:rail', 'live:freshness'],
  });
  t.same(
    streamKindOf({ id: 'a', path: '/api/v1/bus/{route_id}/realtime' }),
    {
      itemType: 'vehicle',
      channels: ['live:vehicles:bus', 'live:arrivals', 'live:freshness'],
    },
    'a bus stream does not recompute when streetcars move',
  );
  t.same(streamKindOf({ id: 'a', path: '/api/v1/rail/{line}/reliability' }), {
    itemType: 'reliability',
    channels: ['reliability', 'live:arrivals'],
  });
  t.same(streamKindOf({ id: 'other', path: '/api/v1/x' }), { itemType: 'other', channels: [] });
});

t.test('snapshots: identified data items, typed; anything else is one item', async (t) => {
  const body = {
    data: [
      { id: 'a', n: 1 },
      { id: 2, type: 'own' },
    ],
    meta: {},
  };
  t.same(snapshotOf(body, 'alert', '/p').items, [
    { type: 'alert', id: 'a', n: 1 },
    { id: 2, type: 'own' },
  ]);
  t.equal(snapshotOf(body, 'alert', '/p').body, body);
  t.same(snapshotOf({ data: { total: 3 } }, 'reliability', '/p').items, [
    { type: 'reliability', id: '/p', data: { total: 3 } },
  ]);
  t.same(snapshotOf({ data: [{ n: 1 }] }, 'x', '/p').items, [{ type: 'x', id: '/p', data: [{ n: 1 }] }]);
  t.same(snapshotOf(null, 'x', '/p').items, [{ type: 'x', id: '/p', data: null }]);
});

t.test('usage rows for connection-minutes', async (t) => {
  const tag: StreamTag = { keyId: 'k', plan: 'max', test: true, endpoint: '/e', requestId: 'r' };
  t.match(connectionMinutes(tag, 2, 5), {
    keyId: 'k',
    unit: 'connection-minute',
    quantity: 2,
    atMs: 5,
    test: true,
    status: 200,
    method: 'GET',
  });
});

const KEYS: Record<string, AuthenticatedKey> = {
  regular: { id: 'k_regular', plan: 'regular', test: false, prefix: 'p' },
  max: { id: 'k_max', plan: 'max', test: false, prefix: 'p' },
};

class Sink implements StreamSink {
  text = '';
  closed = false;
  private listeners: Array<() => void> = [];
  write(chunk: Buffer): StreamWriteResult {
    if (this.closed) return 'closed';
    this.text += chunk.toString('utf8');
    return 'ok';
  }
  bufferedBytes(): number {
    return 0;
  }
  close(): void {
    this.gone();
  }
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }
  gone(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners.splice(0)) l();
  }
}

function setup() {
  const clock = { now: 1_000_000 };
  const hub = new StreamHub(
    { bufferBytes: 1 << 20, pingIntervalMs: 60_000, maxConnectionMs: 3_600_000, coalesceMs: 0 },
    new MemoryEventLog({ capacity: 10 }),
  );
  const allowance = new StreamAllowance();
  const minutes: Array<[string, number]> = [];
  const connections = new ConnectionMeter<StreamTag>({
    sink: { record: (tag, n) => minutes.push([tag.endpoint, n]) },
    now: () => clock.now,
  });
  const streams = new HubStreams({ hub, allowance, connections, now: () => clock.now });
  let fail: ApiError | null = null;
  const route = defineRoute({
    id: 'things',
    method: 'GET',
    path: '/api/v1/things',
    summary: 'Things',
    tags: ['T'],
    auth: 'key',
    meter: 'request',
    sse: true,
    response: z.object({ data: z.array(z.object({ id: z.string(), at: z.number() })) }),
    handler: (ctx) => {
      if (fail) throw fail;
      return { data: [{ id: 'clock', at: ctx.nowMs }] };
    },
  });
  const keys: KeyAuthenticator = { authenticate: (token) => KEYS[token] ?? null, close: () => {} };
  const app = new RequestHandler({
    routes: [route, ...eventRoutes(streams)],
    keys,
    meter: new MemoryMeter(),
    limiter: new SlidingWindowLimiter(),
    cursors: new CursorCodec('x'.repeat(32)),
    clock: () => clock.now,
    log: silentLogger,
    maxBodyBytes: 100,
    responseCacheEntries: 10,
    streams,
  });
  return {
    app,
    hub,
    allowance,
    connections,
    minutes,
    clock,
    setFail: (err: ApiError | null) => {
      fail = err;
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

t.test("a topic re-renders at the current time, not at its first request's", async (t) => {
  const { app, hub, clock } = setup();
  const response = await app.inject({ url: '/api/v1/things?format=sse', headers: { authorization: 'Bearer max' } });
  t.equal(response.status, 200);
  const sink = new Sink();
  response.stream!.close();
  await tick();
  const reply = await app.handle({
    method: 'GET',
    path: '/api/v1/things',
    query: 'format=sse',
    headers: { authorization: 'Bearer max' },
  });
  reply.stream!.start(sink);
  await tick();
  t.match(sink.text, /event: reset\ndata: \{"data":\[\{"id":"clock","at":1000000\}\]\}/);
  clock.now += 5_000;
  hub.changed(liveChannel('alerts'));
  await tick();
  t.match(sink.text, /event: update\ndata: \{"type":"things","id":"clock","at":1005000\}/);
  hub.close();
});

t.test('the slot and the meter follow the subscription', async (t) => {
  const { app, hub, allowance, connections, minutes } = setup();
  const headers = { authorization: 'Bearer regular' };
  const reply = await app.handle({ method: 'GET', path: '/api/v1/events/stream', query: '', headers });
  t.equal(allowance.openStreams('k_regular'), 1, 'reserved when answered');
  reply.stream!.abandon!();
  t.equal(allowance.openStreams('k_regular'), 0, 'freed when the response is never written');
  t.same(minutes, [], 'nothing metered for a stream that never opened');

  const closedSink = new Sink();
  closedSink.gone();
  (await app.handle({ method: 'GET', path: '/api/v1/events/stream', query: '', headers })).stream!.start(closedSink);
  t.equal(allowance.openStreams('k_regular'), 0, 'a connection gone before the start frees the slot');

  const sink = new Sink();
  (await app.handle({ method: 'GET', path: '/api/v1/events/stream', query: '', headers })).stream!.start(sink);
  t.equal(allowance.openStreams('k_regular'), 1);
  t.equal(connections.openCount, 1);
  sink.gone();
  t.equal(allowance.openStreams('k_regular'), 0, 'the client left');
  t.equal(connections.openCount, 0);
  t.same(minutes, [['/api/v1/events/stream', 1]]);

  const ended = new Sink();
  (await app.handle({ method: 'GET', path: '/api/v1/events/stream', query: '', headers })).stream!.start(ended);
  hub.close();
  t.ok(ended.closed, 'the hub ended the stream');
  t.equal(allowance.openStreams('k_regular'), 0, 'and the slot followed');
  const late = new Sink();
  (await app.handle({ method: 'GET', path: '/api/v1/events/stream', query: '', headers })).stream!.start(late);
  t.ok(late.closed, 'a stream started on a closed hub ends at once');
  t.equal(allowance.openStreams('k_regular'), 0);
  t.equal(connections.openCount, 0);
});

t.test('a query failing before the stream opens answers like JSON and frees the slot', async (t) => {
  const { app, allowance, setFail } = setup();
  setFail(new ApiError('not_found', 'gone'));
  const r = await app.inject({ url: '/api/v1/things?format=sse', headers: { authorization: 'Bearer regular' } });
  t.equal(r.status, 404);
  t.equal(allowance.openStreams('k_regular'), 0);
  setFail(null);
  const ok = await app.inject({ url: '/api/v1/things?format=sse', headers: { authorization: 'Bearer regular' } });
  t.equal(ok.status, 200);
  ok.stream!.close();
});
