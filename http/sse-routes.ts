// Event-stream output of the API, on the stream hub: the SSE representation of the alert,
// realtime and reliability endpoints (one shared topic per distinct query, recomputed when what
// it reads changes) and GET /api/v1/events/stream, both behind the per-key allowance and metered
// in connection-minutes. The request chain has authenticated, checked the plan and validated first.
import type { LiveSlice } from '../core/ports.ts';
import { MODES } from '../core/types.ts';
import type { ConnectionMeter, MeteredStream } from '../stream/connection-meter.ts';
import type { StreamAllowanceStore, StreamLease } from '../stream/allowance.ts';
import type { EventFilter } from '../stream/event-filter.ts';
import { KeyStreams, REVOKED_FRAME } from '../stream/key-streams.ts';
import type { StreamHub, StreamPlan } from '../stream/hub.ts';
import type { TopicItem, TopicSnapshot } from '../stream/item-diff.ts';
import type { AuthenticatedKey } from '../accounts/auth.ts';
import type { HeaderList } from './headers.ts';
import type { UsageRecord } from '../accounts/meter.ts';
import { PLAN_LIMITS, type Plan } from '../accounts/plans.ts';
import {
  Reply,
  StreamReply,
  type RequestContext,
  type RouteDef,
  type StreamOpenRequest,
  type StreamProvider,
} from './types.ts';

/**
 * Change channel of one slice of the LiveView (core/ports.ts LIVE_SLICES): a topic recomputes
 * when a slice its items are built from moves, not on every poll of every feed.
 */
export function liveChannel(slice: LiveSlice): string {
  return `live:${slice}`;
}
/** Change channel of the reliability rollups (reliability.updated events). */
export const RELIABILITY_CHANNEL = 'reliability';

/** What a metered stream is billed to; becomes a connection-minute usage row. */
export interface StreamTag {
  readonly keyId: string;
  readonly plan: Plan;
  readonly test: boolean;
  /** route template */
  readonly endpoint: string;
  /** the request that opened the stream */
  readonly requestId: string;
}

/** The usage row for `minutes` more started minutes of a stream. */
export function connectionMinutes(tag: StreamTag, minutes: number, atMs: number): UsageRecord {
  return {
    keyId: tag.keyId,
    plan: tag.plan,
    test: tag.test,
    unit: 'connection-minute',
    quantity: minutes,
    method: 'GET',
    endpoint: tag.endpoint,
    status: 200,
    latencyMs: 0,
    atMs,
    requestId: tag.requestId,
  };
}

export interface StreamKind {
  /** `type` of the items of add/update/remove events */
  readonly itemType: string;
  /** change channels the endpoint's result depends on; empty: every change */
  readonly channels: readonly string[];
}

/** The item type and change channels of an SSE-capable route, from its path. */
export function streamKindOf(route: Pick<RouteDef, 'id' | 'path'>): StreamKind {
  const path = route.path;
  // an alert item carries its feed's freshness verdict
  if (path.endsWith('/alerts'))
    return { itemType: 'alert', channels: [liveChannel('alerts'), liveChannel('freshness')] };
  // today's rows are live: they move with the trip updates, and finalized days with reliability.updated
  if (path.endsWith('/reliability'))
    return { itemType: 'reliability', channels: [RELIABILITY_CHANNEL, liveChannel('arrivals')] };
  // today's stop events are written by the polls of trip updates and vehicles; finalized days with reliability
  if (path.endsWith('/performance')) {
    const mode = MODES.find((m) => path.includes(`/${m}/`));
    const vehicles = mode ? [liveChannel(`vehicles:${mode}`)] : [];
    return { itemType: 'performance', channels: [RELIABILITY_CHANNEL, liveChannel('arrivals'), ...vehicles] };
  }
  if (path.endsWith('/rail/realtime')) {
    return {
      itemType: 'arrival',
      channels: [liveChannel('arrivals'), liveChannel('vehicles:rail'), liveChannel('freshness')],
    };
  }
  if (path.endsWith('/realtime')) {
    // a vehicle carries its trip's delay (arrivals) and its feed's freshness
    const mode = MODES.find((m) => path.includes(`/${m}/`));
    const vehicles = mode ? [liveChannel(`vehicles:${mode}`)] : MODES.map((m) => liveChannel(`vehicles:${m}`));
    return { itemType: 'vehicle', channels: [...vehicles, liveChannel('arrivals'), liveChannel('freshness')] };
  }
  return { itemType: route.id, channels: [] };
}

function isIdentified(value: unknown): value is { id: string | number } {
  if (value === null || typeof value !== 'object') return false;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number';
}

/**
 * The diffable items of a JSON body: each element of its `data` array, typed, when they all
 * have an id; otherwise the whole result is one item (a rollup), so any change is an `update`.
 */
export function snapshotOf(body: unknown, itemType: string, wholeId: string): TopicSnapshot {
  const data = (body as { data?: unknown } | null)?.data;
  if (Array.isArray(data) && data.every(isIdentified)) {
    const items = data.map(
      (item): TopicItem =>
        typeof (item as { type?: unknown }).type === 'string' ? (item as TopicItem) : { type: itemType, ...item },
    );
    return { items, body };
  }
  return { items: [{ type: itemType, id: wholeId, data: data ?? body }], body };
}

/**
 * The request's context at another time: a topic outlives the request that created it, and
 * bodies hold ages computed from ctx.nowMs. Contexts are plain fields over prototype methods.
 */
function contextAt(ctx: RequestContext, nowMs: number): RequestContext {
  if (ctx.nowMs === nowMs) return ctx;
  return Object.assign(Object.create(Object.getPrototypeOf(ctx) as object) as RequestContext, ctx, { nowMs });
}

const EARLIEST: HeaderList = [['Last-Event-ID', 'earliest']];
const NOT_RENDERED = Symbol('not rendered');

export interface HubStreamsOptions {
  readonly hub: StreamHub;
  readonly allowance: StreamAllowanceStore;
  readonly connections: ConnectionMeter<StreamTag>;
  /** the API clock: the time query results are rendered at */
  readonly now?: () => number;
}

export class HubStreams implements StreamProvider {
  private readonly now: () => number;
  /** every open stream by the key that opened it, for revocations */
  private readonly byKey = new KeyStreams();

  constructor(private readonly options: HubStreamsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** SSE of a JSON endpoint: `reset` with the endpoint's body, then add/update/remove. */
  async open(request: StreamOpenRequest): Promise<StreamReply> {
    const lease = await this.acquire(request.key);
    try {
      const { hub } = this.options;
      const kind = streamKindOf(request.route);
      let first: unknown = NOT_RENDERED;
      // the first stream of a query renders before answering, so a bad query (unknown route)
      // gets the same 4xx as the JSON request; later ones join a topic known to render
      if (!hub.hasQuery(request.scope)) first = jsonBody(request.route, await request.render());
      const plan = hub.openQuery({
        key: request.scope,
        channels: kind.channels,
        lastEventId: request.lastEventId,
        compute: async () => {
          let body = first;
          first = NOT_RENDERED;
          if (body === NOT_RENDERED)
            body = jsonBody(request.route, await request.route.handler(contextAt(request.ctx, this.now())));
          return snapshotOf(body, kind.itemType, request.ctx.path);
        },
      });
      return this.reply(plan, request.ctx, request.key, request.route.path, lease);
    } catch (err) {
      lease.release();
      throw err;
    }
  }

  /** GET /api/v1/events/stream */
  async openEvents(
    ctx: RequestContext,
    endpoint: string,
    filter: EventFilter,
    lastEventId: string | null,
  ): Promise<StreamReply> {
    if (!ctx.key) throw new Error('event stream reached without an authenticated key');
    const lease = await this.acquire(ctx.key);
    try {
      return this.reply(this.options.hub.openEvents({ filter, lastEventId }), ctx, ctx.key, endpoint, lease);
    } catch (err) {
      lease.release();
      throw err;
    }
  }

  /** Ends the key's open streams with a `revoked` comment, and any it opens from now on; returns how many. */
  revokeKey(keyId: string): number {
    return this.byKey.revoke(keyId);
  }

  /** 403 forbidden_plan without an allowance, 429 sse_allowance_exceeded when it is used up. */
  private acquire(key: AuthenticatedKey): StreamLease | Promise<StreamLease> {
    return this.options.allowance.acquire(key.id, PLAN_LIMITS[key.plan].sse_streams, key.plan);
  }

  private reply(
    plan: StreamPlan,
    ctx: RequestContext,
    key: AuthenticatedKey,
    endpoint: string,
    lease: StreamLease,
  ): StreamReply {
    const tag: StreamTag = { keyId: key.id, plan: key.plan, test: key.test, endpoint, requestId: ctx.requestId };
    const start = (sink: Parameters<StreamReply['start']>[0]) => {
      if (sink.closed) {
        lease.release();
        return;
      }
      // revoked between its authentication and now: not one item reaches it
      if (this.byKey.isRevoked(key.id)) {
        lease.release();
        sink.write(REVOKED_FRAME);
        sink.close('end');
        return;
      }
      const metered: MeteredStream = this.options.connections.openStream(tag);
      const subscription = plan.start(sink);
      const ended = () => {
        lease.release();
        metered.close();
      };
      // the slot and the meter follow the hub's subscription: it also ends streams itself
      // (slow client, lifetime, partial replay, shutdown), and then the socket reports nothing
      if (subscription.closed) ended();
      else subscription.onClose(ended);
      sink.onClose(() => subscription.close('client'));
      this.byKey.add(key.id, subscription);
    };
    return new StreamReply(start, plan.tooOld ? EARLIEST : [], () => lease.release());
  }
}

function jsonBody(route: RouteDef, result: unknown): unknown {
  if (result instanceof Reply || result instanceof StreamReply)
    throw new Error(`${route.id} has no JSON body to stream`);
  return result;
}
