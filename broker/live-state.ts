// The live state (vehicles, arrivals, alerts, feed health) for serving nodes that run no
// pipeline. The ingest node writes each slice that changed to one Redis hash and announces the
// new version; an edge reads the whole hash when it starts or its subscription comes back, then
// the changed slices on each announcement. Between announcements an edge serves what it holds,
// so with the broker or the ingest node away it keeps serving the last state it had, and the
// feeds' freshness, judged again here every second from their header times, says how old it is.
import type { Redis } from 'ioredis';
import type { Config } from '../core/config.ts';
import type { FeedHealth, LiveView } from '../core/ports.ts';
import { MODES, type Alert, type Arrival, type Freshness, type Mode, type VehiclePosition } from '../core/types.ts';
import { freshnessAt } from '../pipeline/freshness.ts';
import type { Broker } from './redis.ts';

const SLICES = [...MODES.map((m) => `vehicles:${m}`), 'arrivals', 'alerts', 'feeds'] as const;

export function liveKeys(broker: Broker): { hash: string; channel: string } {
  return { hash: broker.key('live'), channel: broker.key('live:changed') };
}

/** The ingest node's side: compares the LiveView version on a short timer and sends what changed. */
export class LiveStatePublisher {
  private readonly sent = new Map<string, string>();
  private lastVersion = -1;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** tells this process's versions from a restarted ingest node's, which count from 0 again */
  private readonly epoch = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  published = 0;

  constructor(
    private readonly broker: Broker,
    private readonly live: LiveView,
    private readonly options: { intervalMs?: number } = {},
  ) {}

  start(): this {
    this.timer ??= setInterval(() => void this.publish(), this.options.intervalMs ?? 250);
    this.timer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.publish();
  }

  /** Sends the slices that changed since the last send; resolves when the broker has them. */
  async publish(): Promise<void> {
    if (this.busy || this.live.version === this.lastVersion || this.broker.state !== 'up') return;
    this.busy = true;
    try {
      const version = this.live.version;
      const slices: Record<string, unknown> = {
        arrivals: this.live.arrivals(),
        alerts: this.live.alerts(),
        feeds: this.live.feeds(),
      };
      for (const mode of MODES) slices[`vehicles:${mode}`] = this.live.vehicles(mode);
      const changed: string[] = [];
      for (const name of SLICES) {
        const text = JSON.stringify(slices[name]);
        if (this.sent.get(name) !== text) {
          changed.push(name, text);
          this.sent.set(name, text);
        }
      }
      const { hash, channel } = liveKeys(this.broker);
      if (changed.length) {
        await this.broker.redis
          .multi()
          .hset(hash, ...changed, 'version', `${this.epoch}.${version}`)
          .publish(channel, `${this.epoch}.${version}`)
          .exec();
        this.published++;
      }
      this.lastVersion = version;
    } catch (err) {
      // sent again in full on the next change: the broker may hold none of it
      this.sent.clear();
      this.broker.log.warn({ err }, 'publishing the live state failed');
    } finally {
      this.busy = false;
    }
  }
}

/** An edge's copy of the live state, read-only, as the API reads it in one process. */
const RANK: Record<Freshness, number> = { fresh: 0, stale: 1, expired: 2 };

export class BrokerLiveView implements LiveView {
  private data = new Map<string, readonly unknown[]>();
  private localVersion = 0;
  private readonly sub: Redis;
  private loading: Promise<void> = Promise.resolve();
  /** the feeds as received, before this node judged their age again */
  private received: readonly FeedHealth[] = [];
  private ager: NodeJS.Timeout | null = null;
  /** the ingest node's version of what this copy holds */
  sourceVersion: string | null = null;

  private constructor(
    private readonly broker: Broker,
    private readonly options: { freshness?: Config['freshness']; ageEveryMs?: number },
  ) {
    this.sub = broker.connection('live-state');
  }

  /**
   * With `freshness` (the config's thresholds), each feed's verdict is the worse of the ingest
   * node's and this node's own from the feed's header time: a copy no one updates any more (the
   * ingest node is down) turns stale, then expired, as the feeds would.
   */
  static async open(
    broker: Broker,
    options: { freshness?: Config['freshness']; ageEveryMs?: number } = {},
  ): Promise<BrokerLiveView> {
    const view = new BrokerLiveView(broker, options);
    if (options.freshness) {
      view.ager = setInterval(() => view.age(), options.ageEveryMs ?? 1000);
      view.ager.unref();
    }
    const { channel } = liveKeys(broker);
    view.sub.on('message', (ch: string) => {
      if (ch === channel) void view.reload();
    });
    // after a reconnect announcements may have been missed: read it all again
    view.sub.on('ready', () => void view.reload());
    await view.sub.subscribe(channel);
    await view.reload();
    return view;
  }

  get version(): number {
    return this.localVersion;
  }

  vehicles(mode: Mode): readonly VehiclePosition[] {
    return (this.data.get(`vehicles:${mode}`) ?? []) as readonly VehiclePosition[];
  }

  arrivals(): readonly Arrival[] {
    return (this.data.get('arrivals') ?? []) as readonly Arrival[];
  }

  alerts(): readonly Alert[] {
    return (this.data.get('alerts') ?? []) as readonly Alert[];
  }

  feeds(): readonly FeedHealth[] {
    return (this.data.get('feeds') ?? []) as readonly FeedHealth[];
  }

  /** Reads the hash again (announcements are coalesced: one read at a time, one after it). */
  reload(): Promise<void> {
    this.loading = this.loading
      .then(() => this.readAll())
      .catch((err: unknown) => {
        this.broker.log.warn({ err }, 'reading the live state from the broker failed; serving the last copy');
      });
    return this.loading;
  }

  async close(): Promise<void> {
    if (this.ager) clearInterval(this.ager);
    this.sub.disconnect();
    await this.loading;
  }

  /** Judges the received feeds' age now; moves the version when a verdict changes. */
  age(nowMs = Date.now()): void {
    const cfg = this.options.freshness;
    if (!cfg) return;
    const current = this.feeds();
    let changed = false;
    const next = this.received.map((h, i) => {
      const own = freshnessAt({ header_ms: h.header_timestamp_ms, changed_ms: h.last_success_ms }, nowMs, cfg);
      const verdict = RANK[own] > RANK[h.freshness] ? own : h.freshness;
      if (current[i]?.freshness !== verdict) changed = true;
      return verdict === h.freshness ? h : { ...h, freshness: verdict };
    });
    if (!changed) return;
    this.data.set('feeds', next);
    this.localVersion++;
  }

  private async readAll(): Promise<void> {
    const { hash } = liveKeys(this.broker);
    const version = await this.broker.redis.hget(hash, 'version');
    if (version === null || version === this.sourceVersion) return;
    const values = await this.broker.redis.hmget(hash, ...SLICES);
    const next = new Map<string, readonly unknown[]>();
    SLICES.forEach((name, i) => {
      next.set(name, values[i] ? (JSON.parse(values[i]!) as unknown[]) : []);
    });
    this.data = next;
    this.received = (next.get('feeds') ?? []) as readonly FeedHealth[];
    this.sourceVersion = version;
    this.localVersion++;
    this.age();
  }
}
