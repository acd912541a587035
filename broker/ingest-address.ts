// Where edges find the ingest node for the paths they forward to it (docs/guides/multi-node.md
// machine"). The ingest node writes its base URL to one key with a short expiry and renews it, so
// the key also says the node is alive: a node gone for longer than the expiry is no address, and
// edges answer 503 at once instead of waiting on a connection that cannot succeed.
import { within, type Broker } from './redis.ts';

const TTL_S = 15;
const RENEW_MS = 5_000;
/** how long an edge reuses the address it read */
const CACHE_MS = 1_000;

export function ingestAddressKey(broker: Broker): string {
  return broker.key('ingest:url');
}

/** The ingest node's side: announces `url` now and every few seconds until closed. */
export class IngestAnnouncer {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly broker: Broker,
    private readonly url: string,
  ) {}

  async start(): Promise<this> {
    await this.announce();
    this.timer ??= setInterval(() => void this.announce(), RENEW_MS);
    this.timer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // gone now rather than when the key expires: edges answer 503 without trying
    if (this.broker.state === 'up') {
      await within(
        this.broker.redis.eval(
          "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
          1,
          ingestAddressKey(this.broker),
          this.url,
        ),
      );
    }
  }

  private async announce(): Promise<void> {
    if (this.broker.state !== 'up') return;
    await this.broker.redis.set(ingestAddressKey(this.broker), this.url, 'EX', TTL_S).catch((err: unknown) => {
      this.broker.log.warn({ err }, 'announcing the ingest address failed');
    });
  }
}

/** An edge's reader: the announced address, read at most once a second; null when none is. */
export function ingestAddress(broker: Broker, now: () => number = Date.now): () => Promise<string | null> {
  let cached: { url: string | null; atMs: number } | null = null;
  return async () => {
    if (cached && now() - cached.atMs < CACHE_MS) return cached.url;
    // with the broker down the last address read is still the best guess
    if (broker.state !== 'up') return cached?.url ?? null;
    const url = await broker.redis.get(ingestAddressKey(broker));
    cached = { url, atMs: now() };
    return url;
  };
}
