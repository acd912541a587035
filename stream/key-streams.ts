// The open streams of each API key, so a revocation ends them at once rather than at their
// lifetime (sse.max_connection_s). A key once revoked stays revoked: a stream of it that starts
// after the notice (its request was authenticated just before) is ended as it starts.
import { frameBytes } from './sse-frame.ts';
import type { Subscription } from './subscriber.ts';

/** The last block a revoked key's stream receives: a comment, so no client mistakes it for data. */
export const REVOKED_FRAME = frameBytes({ comment: 'revoked' });

export class KeyStreams {
  private readonly open = new Map<string, Set<Subscription>>();
  private readonly revoked = new Set<string>();

  /** Tracks a stream of `keyId` until it closes; ends it now when the key is already revoked. */
  add(keyId: string, subscription: Subscription): void {
    if (subscription.closed) return;
    if (this.revoked.has(keyId)) {
      subscription.closeWith('revoked', REVOKED_FRAME);
      return;
    }
    let set = this.open.get(keyId);
    if (!set) {
      set = new Set();
      this.open.set(keyId, set);
    }
    set.add(subscription);
    subscription.onClose(() => {
      set.delete(subscription);
      if (set.size === 0 && this.open.get(keyId) === set) this.open.delete(keyId);
    });
  }

  /** Ends every stream of the key with the `revoked` comment; returns how many were open. */
  revoke(keyId: string): number {
    this.revoked.add(keyId);
    const set = this.open.get(keyId);
    if (!set) return 0;
    this.open.delete(keyId);
    const streams = [...set];
    for (const subscription of streams) subscription.closeWith('revoked', REVOKED_FRAME);
    return streams.length;
  }

  isRevoked(keyId: string): boolean {
    return this.revoked.has(keyId);
  }

  /** Open streams of the key. */
  count(keyId: string): number {
    return this.open.get(keyId)?.size ?? 0;
  }
}
