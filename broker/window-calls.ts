// One Lua call (REDIS_LEASES_LUA) carrying every operation a node has for the shared windows,
// on any number of keys: the arguments built once, the reply read back per operation.
import type { Redis } from 'ioredis';
import { WINDOW_MS } from '../accounts/plans.ts';
import type { Broker } from './redis.ts';
import { REDIS_LEASES_LUA } from './redis-scripts.ts';

/**
 * g: grant (a quota, b wanted, c needed); f: finalize (a served, b last instant); m: merge (a count, b ms ago); p:
 * peek
 */
export interface WindowOp {
  readonly kind: 'g' | 'f' | 'm' | 'p';
  readonly keyId: string;
  readonly id: string;
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

export interface WindowReply {
  /** the broker's clock when it ran the call */
  readonly nowMs: number;
  /** per operation: granted, total counted, oldest instant (or −1), three numbers each */
  readonly values: readonly number[];
}

type Scripts = Redis & { transitLeases(numKeys: number, ...args: Array<string | number>): Promise<number[]> };

export class WindowCalls {
  private readonly scripts: Scripts;

  constructor(
    private readonly broker: Broker,
    private readonly leaseMs: number,
    /** the broker's clock for tests; by default Redis's TIME */
    private readonly brokerClock: (() => number) | null,
  ) {
    this.scripts = broker.redis as Scripts;
    broker.redis.defineCommand('transitLeases', { lua: REDIS_LEASES_LUA });
  }

  async send(ops: readonly WindowOp[]): Promise<WindowReply> {
    const keyIndex = new Map<string, number>();
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const op of ops) {
      let index = keyIndex.get(op.keyId);
      if (index === undefined) {
        index = keyIndex.size + 1;
        keyIndex.set(op.keyId, index);
        keys.push(this.broker.key(`window:${op.keyId}`), this.broker.key(`window:${op.keyId}:n`));
      }
      args.push(index, op.kind, op.id, op.a, op.b, op.c);
    }
    const reply = await this.scripts.transitLeases(
      keys.length,
      ...keys,
      this.brokerClock?.() ?? 0,
      WINDOW_MS,
      this.leaseMs,
      ...args,
    );
    return { nowMs: reply[0]!, values: reply.slice(1) };
  }
}
