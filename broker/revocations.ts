// Key revocations to every node through Redis pub/sub: the node that revokes (the ingest node's
// admin channel) publishes the key id, every node drops it from its key cache at once. A node
// whose subscription was interrupted may have missed notices, so it drops its whole cache when
// the subscription is back (keys are then read again from the store on first use).
import type { Broker } from './redis.ts';

export interface RevocationNotices {
  /** Tells every node (this one included) that `keyId` is revoked. */
  publish(keyId: string): Promise<void>;
  close(): Promise<void>;
}

export interface RevocationHandlers {
  revoked(keyId: string): void;
  /** notices may have been missed: forget every cached key */
  resync(): void;
}

export async function revocationNotices(broker: Broker, handlers: RevocationHandlers): Promise<RevocationNotices> {
  const channel = broker.key('revoked');
  const sub = broker.connection('revocations');
  let subscribedOnce = false;
  sub.on('message', (ch: string, keyId: string) => {
    if (ch === channel) handlers.revoked(keyId);
  });
  // ioredis re-subscribes by itself after a reconnect; 'ready' marks that moment
  sub.on('ready', () => {
    if (subscribedOnce) handlers.resync();
  });
  await sub.subscribe(channel);
  subscribedOnce = true;
  return {
    async publish(keyId) {
      await broker.redis.publish(channel, keyId);
    },
    async close() {
      sub.disconnect();
    },
  };
}
