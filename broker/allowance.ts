// SSE allowance across nodes: each open stream holds a lease in Redis (a hash per key: lease id →
// expiry), taken by one Lua call that counts the live leases first, so a Regular key's third
// stream is refused whichever nodes hold the two. A node renews its leases while their streams
// stay open; a node that dies stops renewing, and its leases expire after `leaseTtlMs`.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '../core/errors.ts';
import {
  ALLOWANCE_RETRY_AFTER_S,
  StreamAllowance,
  type StreamAllowanceStore,
  type StreamLease,
} from '../stream/allowance.ts';
import type { Broker } from './redis.ts';

/** KEYS[1] the key's lease hash; ARGV: leaseId, limit, ttlMs. Returns {1|0, open leases}. */
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local open = 0
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= now then redis.call('HDEL', KEYS[1], all[i]) else open = open + 1 end
end
if open >= tonumber(ARGV[2]) then return {0, open} end
redis.call('HSET', KEYS[1], ARGV[1], now + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return {1, open + 1}
`;

/** KEYS: lease hashes; ARGV: ttlMs, then one lease id per key. Pushes each live lease's expiry. */
const RENEW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  if redis.call('HEXISTS', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('HSET', KEYS[i], ARGV[i + 1], now + ttl)
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return #KEYS
`;

type Scripts = Redis & {
  transitLease(key: string, leaseId: string, limit: number, ttlMs: number): Promise<[number, number]>;
  transitRenew(numKeys: number, ...args: Array<string | number>): Promise<number>;
};

export class BrokerStreamAllowance implements StreamAllowanceStore {
  private readonly scripts: Scripts;
  private readonly held = new Map<string, string>();
  private readonly perKey = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly ttlMs: number;
  /** while the broker is away each node counts its own streams (per-node allowance) */
  private readonly local = new StreamAllowance();

  constructor(
    private readonly broker: Broker,
    options: { leaseTtlMs?: number } = {},
  ) {
    this.ttlMs = options.leaseTtlMs ?? 30_000;
    this.scripts = broker.redis as Scripts;
    broker.redis.defineCommand('transitLease', { numberOfKeys: 1, lua: ACQUIRE_LUA });
    broker.redis.defineCommand('transitRenew', { lua: RENEW_LUA });
  }

  start(): this {
    this.timer ??= setInterval(() => void this.renew(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
    return this;
  }

  async acquire(keyId: string, limit: number, planName = 'this'): Promise<StreamLease> {
    if (limit <= 0)
      throw new ApiError('forbidden_plan', `The ${planName} plan does not include event streams; upgrade to open one.`);
    // a request never waits for a broker that is away
    if (this.broker.state !== 'up') return this.local.acquire(keyId, limit, planName);
    const leaseId = randomBytes(9).toString('base64url');
    const hash = this.broker.key(`streams:${keyId}`);
    const [ok, open] = await this.scripts.transitLease(hash, leaseId, limit, this.ttlMs);
    if (!ok) {
      throw new ApiError(
        'sse_allowance_exceeded',
        `This key already has ${open} of ${limit} concurrent event streams open; close one first.`,
        {
          members: { open_streams: open, allowed_streams: limit },
          headers: { 'Retry-After': String(ALLOWANCE_RETRY_AFTER_S) },
        },
      );
    }
    this.held.set(leaseId, hash);
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
    let released = false;
    return {
      keyId,
      release: () => {
        if (released) return;
        released = true;
        this.held.delete(leaseId);
        const n = (this.perKey.get(keyId) ?? 1) - 1;
        if (n <= 0) this.perKey.delete(keyId);
        else this.perKey.set(keyId, n);
        void this.broker.redis.hdel(hash, leaseId).catch(() => undefined);
      },
    };
  }

  openStreams(keyId: string): number {
    return (this.perKey.get(keyId) ?? 0) + this.local.openStreams(keyId);
  }

  /** Leases this node holds. */
  get size(): number {
    return this.held.size;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0 || this.broker.state !== 'up') return;
    const keys = [...this.held.values()];
    const ids = [...this.held.keys()];
    await this.scripts.transitRenew(keys.length, ...keys, this.ttlMs, ...ids).catch((err: unknown) => {
      this.broker.log.warn({ err }, 'renewing stream leases failed');
    });
  }
}
