// The operator's view of one key's webhook endpoints (`transit-api keys show|endpoints`), for a
// key that may be revoked and so can no longer list or delete them itself: every endpoint not
// deleted, with how many of its deliveries are in each state. No secret is read.
import type { Db } from '../store/db.ts';
import { deleteEndpoint, listEndpoints } from './endpoints.ts';
import { DELIVERY_STATES, type DeliveryState, type Endpoint } from './schemas.ts';

export type DeliveryCounts = Record<DeliveryState, number>;

export interface KeyEndpoint extends Endpoint {
  deliveries: DeliveryCounts;
}

const noDeliveries = (): DeliveryCounts => Object.fromEntries(DELIVERY_STATES.map((s) => [s, 0])) as DeliveryCounts;

export async function keyEndpoints(db: Db, keyId: string): Promise<KeyEndpoint[]> {
  const endpoints = await listEndpoints(db, keyId);
  const counts = await db.all<{ endpoint_id: string; state: string; n: bigint }>(
    `SELECT endpoint_id, state, count(*) AS n FROM webhook_deliveries WHERE key_id = $1 GROUP BY ALL`,
    [keyId],
  );
  return endpoints.map((endpoint) => {
    const deliveries = noDeliveries();
    for (const c of counts) {
      if (c.endpoint_id === endpoint.id && c.state in deliveries) deliveries[c.state as DeliveryState] = Number(c.n);
    }
    return { ...endpoint, deliveries };
  });
}

/** Deletes the endpoints named (all the key's when `ids` is absent); returns those deleted. */
export async function deleteKeyEndpoints(db: Db, keyId: string, ids?: readonly string[]): Promise<Endpoint[]> {
  const endpoints = await listEndpoints(db, keyId);
  const targets = ids ? endpoints.filter((e) => ids.includes(e.id)) : endpoints;
  for (const endpoint of targets) await deleteEndpoint(db, keyId, endpoint.id);
  return targets;
}
