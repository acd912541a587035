// Edges tell the ingest node how they are: each writes a small JSON heartbeat into one Redis
// hash (a field per node) every 2 s and deletes it when it stops; the ingest node reads the hash
// as often and notes when each heartbeat last changed, by its own clock (no clock of the edges
// is trusted for ages). A heartbeat unchanged for 10 minutes (a node that died) is deleted.
import { within, type Broker } from './redis.ts';

const EVERY_MS = 2_000;
const FORGET_AFTER_MS = 600_000;

export function heartbeatKey(broker: Broker): string {
  return broker.key('nodes');
}

/** A node's side: `payload(n)` written every 2 s while the broker is up; removed on close. */
export class HeartbeatPublisher {
  private timer: NodeJS.Timeout | null = null;
  private n = 0;
  sent = 0;

  constructor(
    private readonly broker: Broker,
    private readonly nodeId: string,
    private readonly payload: (n: number) => unknown,
    private readonly everyMs = EVERY_MS,
  ) {}

  start(): this {
    void this.beat();
    this.timer ??= setInterval(() => void this.beat(), this.everyMs).unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // gone from the ingest node's list now, rather than shown as silent
    if (this.broker.state === 'up') await within(this.broker.redis.hdel(heartbeatKey(this.broker), this.nodeId));
  }

  private async beat(): Promise<void> {
    // commands would queue for the reconnect: the next beat after it says how the node is then
    if (this.broker.state !== 'up') return;
    try {
      const text = JSON.stringify(this.payload(++this.n));
      await this.broker.redis.hset(heartbeatKey(this.broker), this.nodeId, text);
      this.sent++;
    } catch (err) {
      this.broker.log.debug({ err }, 'the heartbeat was not written');
    }
  }
}

export interface Heartbeat {
  nodeId: string;
  payload: unknown;
  /** when this node saw it change, by its own clock */
  heardMs: number;
}

/** The ingest node's side: the heartbeats as last read (every 2 s), each with when it last changed. */
export class HeartbeatReader {
  private timer: NodeJS.Timeout | null = null;
  private readonly seen = new Map<string, { text: string; heardMs: number; payload: unknown }>();
  private reading = false;

  constructor(
    private readonly broker: Broker,
    private readonly options: { everyMs?: number; forgetAfterMs?: number; now?: () => number } = {},
  ) {}

  start(): this {
    void this.read();
    this.timer ??= setInterval(() => void this.read(), this.options.everyMs ?? EVERY_MS).unref();
    return this;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  list(): Heartbeat[] {
    return [...this.seen].map(([nodeId, s]) => ({ nodeId, payload: s.payload, heardMs: s.heardMs }));
  }

  async read(): Promise<void> {
    if (this.reading || this.broker.state !== 'up') return;
    this.reading = true;
    const now = (this.options.now ?? Date.now)();
    try {
      const all = await this.broker.redis.hgetall(heartbeatKey(this.broker));
      const stale: string[] = [];
      for (const [nodeId, text] of Object.entries(all)) {
        const before = this.seen.get(nodeId);
        if (before?.text === text) {
          if (now - before.heardMs > (this.options.forgetAfterMs ?? FORGET_AFTER_MS)) stale.push(nodeId);
          continue;
        }
        let payload: unknown = null;
        try {
          payload = JSON.parse(text);
        } catch {
          // shown as nothing: status/ validates what it lists
        }
        this.seen.set(nodeId, { text, heardMs: now, payload });
      }
      // stopped cleanly (deleted), or forgotten below
      for (const nodeId of this.seen.keys()) if (!(nodeId in all)) this.seen.delete(nodeId);
      for (const nodeId of stale) {
        this.seen.delete(nodeId);
        await this.broker.redis.hdel(heartbeatKey(this.broker), nodeId);
      }
    } catch (err) {
      this.broker.log.debug({ err }, "reading the edges' heartbeats failed");
    } finally {
      this.reading = false;
    }
  }
}
