// SSE allowance: concurrent open event streams per API key (Free 0, Regular 2, Max 25). The
// count lives in this process; a multi-node deploy needs a shared counter behind the same API.
import { ApiError } from '../core/errors.ts';

/**
 * Retry-After of a 429 sse_allowance_exceeded. A slot frees only when one of the key's own streams
 * closes, which the server cannot foresee; a fixed back-off keeps a reconnecting EventSource from
 * spinning, and the document requires Retry-After on every 429.
 */
export const ALLOWANCE_RETRY_AFTER_S = 30;

export interface StreamLease {
  readonly keyId: string;
  /** Frees the slot; safe to call more than once. */
  release(): void;
}

/** Where stream slots are counted: this process (StreamAllowance) or a broker shared by nodes (broker/allowance.ts). */
export interface StreamAllowanceStore {
  acquire(keyId: string, limit: number, planName?: string): StreamLease | Promise<StreamLease>;
  /** streams of this key open through this process */
  openStreams(keyId: string): number;
}

export class StreamAllowance implements StreamAllowanceStore {
  private readonly open = new Map<string, number>();

  /**
   * Takes one slot of `keyId`, whose plan allows `limit` concurrent streams.
   * Throws ApiError forbidden_plan (403) when the plan has no streams, sse_allowance_exceeded
   * (429) when all its slots are taken.
   */
  acquire(keyId: string, limit: number, planName = 'this'): StreamLease {
    if (limit <= 0) {
      throw new ApiError('forbidden_plan', `The ${planName} plan does not include event streams; upgrade to open one.`);
    }
    const current = this.open.get(keyId) ?? 0;
    if (current >= limit) {
      throw new ApiError(
        'sse_allowance_exceeded',
        `This key already has ${current} of ${limit} concurrent event streams open; close one first.`,
        {
          members: { open_streams: current, allowed_streams: limit },
          headers: { 'Retry-After': String(ALLOWANCE_RETRY_AFTER_S) },
        },
      );
    }
    this.open.set(keyId, current + 1);
    let released = false;
    return {
      keyId,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.open.get(keyId) ?? 1) - 1;
        if (n <= 0) this.open.delete(keyId);
        else this.open.set(keyId, n);
      },
    };
  }

  openStreams(keyId: string): number {
    return this.open.get(keyId) ?? 0;
  }
}
