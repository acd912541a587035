// The one broker connection a node keeps (commands) plus the dedicated ones that block (XREAD)
// or subscribe; every key under one prefix so several deployments can share a Redis.
import { Redis, type RedisOptions } from 'ioredis';
import { componentLogger, type Logger } from '../core/logger.ts';
import { DEFAULT_CONFIG } from '../core/config.ts';

export interface BrokerOptions {
  url: string;
  /** key prefix, e.g. `transit:` (config broker.prefix) */
  prefix?: string;
  log?: Logger;
}

export type BrokerState = 'up' | 'down';

export class Broker {
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
  private readonly extra = new Set<Redis>();
  private readonly listeners = new Set<(state: BrokerState) => void>();
  private current: BrokerState = 'down';
  /** when the connection was last lost (epoch ms), null while it never was */
  downSinceMs: number | null = null;

  constructor(private readonly options: BrokerOptions) {
    this.prefix = options.prefix ?? DEFAULT_CONFIG.broker.prefix;
    this.log = componentLogger(options.log, 'broker');
    this.redis = this.connection('commands');
    this.redis.on('ready', () => this.setState('up'));
    this.redis.on('close', () => this.setState('down'));
  }

  /** Resolves once connected (or rejects after `timeoutMs`): a start with no broker fails clearly. */
  async ready(timeoutMs = 10_000): Promise<this> {
    if (this.redis.status === 'ready') return this;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        // no reconnect loop left behind: the caller gives up on this broker
        void this.close();
        reject(new Error(`broker ${redactUrl(this.options.url)} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', onReady);
    });
    return this;
  }

  get state(): BrokerState {
    return this.current;
  }

  /** Called with every change of state (for /status and the limits' fallback). */
  onState(listener: (state: BrokerState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  key(name: string): string {
    return `${this.prefix}${name}`;
  }

  /** Another connection, for blocking reads or pub/sub; closed with the broker. */
  connection(purpose: string, extra: RedisOptions = {}): Redis {
    const redis = new Redis(this.options.url, {
      // commands wait for a reconnect instead of failing after a few retries; callers that must
      // not wait (the limiter) check `state` first
      maxRetriesPerRequest: null,
      retryStrategy: (times) => Math.min(times * 100, 1000),
      connectionName: `transit-api:${purpose}`,
      lazyConnect: false,
      ...extra,
    });
    // errors are reported through the state; ioredis reconnects by itself
    redis.on('error', (err: Error) => this.log.debug({ err, purpose }, 'broker connection error'));
    if (this.redis) this.extra.add(redis);
    return redis;
  }

  async close(): Promise<void> {
    for (const r of this.extra) r.disconnect();
    this.extra.clear();
    // QUIT waits for a reply: only when connected, and not for long
    if (this.redis.status === 'ready') {
      await Promise.race([this.redis.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    }
    this.redis.disconnect();
    this.listeners.clear();
  }

  private setState(state: BrokerState): void {
    if (state === this.current) return;
    this.current = state;
    if (state === 'down') this.downSinceMs = Date.now();
    this.log[state === 'down' ? 'warn' : 'info'](
      { url: redactUrl(this.options.url) },
      state === 'down' ? 'broker connection lost' : 'broker connected',
    );
    for (const listener of this.listeners) listener(state);
  }
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * A loop's way out: a command sent while the broker is down waits in the client for its return
 * (commands are never failed by retries), so a loop awaiting one would hold its close forever.
 * `race(command)` settles with the command, or with null once `stop()` was called.
 */
export class LoopStop {
  private resolve: (value: null) => void = () => undefined;
  private readonly stopped = new Promise<null>((resolve) => {
    this.resolve = resolve;
  });

  stop(): void {
    this.resolve(null);
  }

  race<T>(command: Promise<T>): Promise<T | null> {
    // settled later or never; its failure after a stop is nobody's concern
    command.catch(() => undefined);
    return Promise.race([command, this.stopped]);
  }
}

/**
 * For what a close sends to the broker (a last flush, a deletion): a broker that went down while
 * the command was on its way keeps it waiting for its return, and a shutdown must not wait with
 * it. Resolves with the command's answer, or undefined after `ms`.
 */
export function within<T>(command: Promise<T>, ms = 2_000): Promise<T | undefined> {
  command.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  return Promise.race([command, late]).finally(() => clearTimeout(timer));
}
