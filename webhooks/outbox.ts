// Turns bus events into outbox rows: each event matched against the enabled endpoints'
// filters becomes one message (its id is the webhook-id) and one delivery per endpoint,
// committed before the worker may attempt any of them. Endpoints of revoked keys never match.
import type { Db } from '../store/db.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import { toEnvelope, type DomainEvent, type EventBus, type Unsubscribe } from '../core/events.ts';
import { DEFAULT_EVENT_TYPES, type EndpointFilters } from './schemas.ts';
import { ENDPOINT_COLUMNS, toRecord, type EndpointRecord } from './endpoints.ts';
import { insertOutbox, type NewDelivery, type NewMessage } from './delivery-store.ts';
import { newId } from './sql.ts';
import { endRevokedWebhooks, REVOKED_KEY_IDS } from './revocation.ts';
import type { BodyCache } from './body-cache.ts';

/**
 * The body: the event's envelope (core/event-schemas.ts), the same JSON the event stream sends;
 * it holds the Standard Webhooks payload fields {type, timestamp, data}.
 */
export function payloadOf(event: DomainEvent): string {
  return JSON.stringify(toEnvelope(event));
}

/**
 * An event passes when every given dimension matches. Events that concern no particular
 * mode or route (a feed-wide notice, an export) pass those dimensions: a route filter
 * narrows route-specific events, it does not hide service-wide ones.
 */
export function matchesFilters(filters: EndpointFilters, event: DomainEvent): boolean {
  const types = filters.event_types ?? DEFAULT_EVENT_TYPES;
  if (!types.includes(event.type)) return false;
  if (filters.modes && event.modes.length > 0 && !event.modes.some((m) => filters.modes!.includes(m))) return false;
  if (filters.routes || filters.lines) {
    const wanted = [...(filters.routes ?? []), ...(filters.lines ?? [])];
    // either list matches either kind: endpoint filters are stored as given, not checked by kind
    const concerned = [...event.routes, ...event.lines];
    if (concerned.length > 0 && !concerned.some((r) => wanted.includes(r))) return false;
  }
  return true;
}

export interface EnqueueResult {
  messages: number;
  deliveries: number;
  /** events whose data could not be serialized (a producer bug); each is reported, none stored */
  rejected: number;
}

/**
 * The endpoints that receive, and whether any enabled one belongs to a revoked key: a key revoked
 * by SQL rather than `keys revoke`, whose endpoints are then disabled before anything is queued.
 */
export async function activeEndpoints(db: Db): Promise<{ endpoints: EndpointRecord[]; ofRevokedKeys: boolean }> {
  const found = await db.all<Record<string, unknown>>(
    `SELECT ${ENDPOINT_COLUMNS}, key_id IN (${REVOKED_KEY_IDS}) AS key_revoked
     FROM webhook_endpoints WHERE enabled AND deleted_at IS NULL ORDER BY endpoint_id`,
  );
  const endpoints = found.filter((row) => !row.key_revoked).map(toRecord);
  return { endpoints, ofRevokedKeys: endpoints.length < found.length };
}

export async function enqueueEvents(
  db: Db,
  events: readonly DomainEvent[],
  nowMs: number,
  cache?: BodyCache,
  onReject?: (event: DomainEvent, err: unknown) => void,
): Promise<EnqueueResult> {
  if (events.length === 0) return { messages: 0, deliveries: 0, rejected: 0 };
  const { endpoints, ofRevokedKeys } = await activeEndpoints(db);
  if (ofRevokedKeys) await db.transaction((conn) => endRevokedWebhooks(conn, nowMs));
  const messages: NewMessage[] = [];
  const deliveries: NewDelivery[] = [];
  let rejected = 0;
  for (const event of events) {
    const matched = endpoints.filter((e) => matchesFilters(e.filters, event));
    if (matched.length === 0) continue;
    let body: string;
    try {
      body = payloadOf(event);
    } catch (err) {
      // one bad event (a BigInt, a cycle) must not cost the rest of its batch
      rejected++;
      onReject?.(event, err);
      continue;
    }
    // the event's id: webhook-id and the body's `id` name the same event, as on the stream
    const message_id = event.id;
    messages.push({ message_id, event_type: event.type, occurred_ms: event.at_ms, body });
    for (const endpoint of matched) {
      deliveries.push({
        delivery_id: newId('dlv'),
        message_id,
        endpoint_id: endpoint.endpoint_id,
        key_id: endpoint.key_id,
        event_type: event.type,
      });
    }
  }
  const stored = await insertOutbox(db, messages, deliveries, nowMs);
  if (stored && cache) for (const m of messages) cache.set(m.message_id, m.body);
  return { messages: stored ? messages.length : 0, deliveries: stored, rejected };
}

export interface OutboxOptions {
  db: Db;
  bus: EventBus;
  now: () => number;
  /** called after each batch is committed, so the worker can start at once */
  onStored: (result: EnqueueResult) => void;
  /** default: logged on `log` */
  onError?: (err: unknown) => void;
  log?: Logger;
  cache?: BodyCache;
}

/**
 * Subscribes to the bus and writes each batch in arrival order. An event lives only in
 * memory until its batch commits; from then on no crash loses it.
 */
export class Outbox {
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: Unsubscribe | null = null;
  failedBatches = 0;
  rejectedEvents = 0;

  constructor(private readonly options: OutboxOptions) {}

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.options.bus.subscribe((events) => {
      void this.enqueue(events);
    });
  }

  /** Stores a batch after those before it; never rejects (failures are counted and reported). */
  enqueue(events: readonly DomainEvent[]): Promise<void> {
    const { db, now, onStored, onError } = this.options;
    this.chain = this.chain.then(async () => {
      try {
        onStored(
          await enqueueEvents(db, events, Math.round(now()), this.options.cache, (event, err) => {
            this.rejectedEvents++;
            const rejected = new Error(
              `webhook outbox: ${event.type} event not serializable: ${(err as Error).message}`,
              { cause: err },
            );
            if (onError) onError(rejected);
            else componentLogger(this.options.log, 'webhooks').error({ err: rejected }, 'event not stored');
          }),
        );
      } catch (err) {
        this.failedBatches++;
        if (onError) onError(err);
        else componentLogger(this.options.log, 'webhooks').error({ err }, 'outbox batch not stored');
      }
    });
    return this.chain;
  }

  /** Stops listening and waits for the batches already received to be stored. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.chain;
  }
}
