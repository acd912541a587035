// The webhooks component for the composition root: endpoints API, outbox, worker.
import type { Db } from '../store/db.ts';
import type { Config } from '../core/config.ts';
import type { DomainEvent, EventBus } from '../core/events.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import { systemClock, type Clock } from './clock.ts';
import { getDelivery, listDeliveries, type DeliveryFilter } from './deliveries.ts';
import {
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  getEndpoint,
  listEndpoints,
  redeliverMessage,
  rotateSecret,
  updateEndpoint,
  type EndpointDeps,
} from './endpoints.ts';
import { pruneOutbox } from './delivery-store.ts';
import { SecretBox } from './secret-box.ts';
import { sealStoredSecrets } from './sealing.ts';
import { BodyCache } from './body-cache.ts';
import { Outbox } from './outbox.ts';
import { endRevokedWebhooks, type RevokedWebhooks } from './revocation.ts';
import type {
  Delivery,
  DeliveryPage,
  Endpoint,
  EndpointCreate,
  EndpointUpdate,
  EndpointWithSecret,
} from './schemas.ts';
import { policyFromConfig, systemResolver, type Resolver, type TargetPolicy } from './ssrf.ts';
import { DeliveryWorker, type WorkerStats } from './worker.ts';
import type { AttemptVerdict } from './delivery-store.ts';

export * from './schemas.ts';
export { SecretBox } from './secret-box.ts';
export { UnreadableSecretsError } from './sealing.ts';
export { systemClock, type Clock } from './clock.ts';
export type { RevokedWebhooks } from './revocation.ts';
export { type TargetPolicy, type Resolver, type AddressClass, PRIVATE_CLASSES, checkTarget } from './ssrf.ts';

export interface WebhooksOptions {
  db: Db;
  bus: EventBus;
  config: Pick<Readonly<Config>, 'webhooks' | 'signing_secret'> & {
    previous_signing_secrets?: readonly string[];
  };
  /**
   * encrypts endpoint secrets at rest; default: keyed by config.signing_secret (opening with
   * previous_signing_secrets too). The service passes its own when it generated the secret.
   */
  secrets?: SecretBox;
  /** time and timers; a ManualClock in tests */
  clock?: Clock;
  /** overrides the policy derived from `config.webhooks.allow_private_targets` */
  targetPolicy?: TargetPolicy;
  resolve?: Resolver;
  random?: () => number;
  stopGraceMs?: number;
  /** default: logged on `log` */
  onError?: (err: unknown) => void;
  log?: Logger;
  onVerdict?: (verdict: AttemptVerdict) => void;
}

export interface Webhooks {
  /**
   * Brings stored secrets under the current signing_secret (sealing.ts: refuses secrets it cannot
   * open), ends the webhooks of keys revoked while stopped (by SQL), recovers deliveries a crash
   * left in flight, subscribes to the bus, starts the worker.
   */
  start(): Promise<void>;
  /** unsubscribes, stores what the bus already handed over, finishes or interrupts attempts */
  stop(): Promise<void>;
  createEndpoint(keyId: string, input: EndpointCreate): Promise<EndpointWithSecret>;
  listEndpoints(keyId: string): Promise<Endpoint[]>;
  getEndpoint(keyId: string, endpointId: string): Promise<Endpoint>;
  updateEndpoint(keyId: string, endpointId: string, patch: EndpointUpdate): Promise<Endpoint>;
  disableEndpoint(keyId: string, endpointId: string): Promise<Endpoint>;
  deleteEndpoint(keyId: string, endpointId: string): Promise<void>;
  rotateSecret(keyId: string, endpointId: string): Promise<EndpointWithSecret>;
  redeliver(keyId: string, endpointId: string, messageId: string): Promise<Delivery>;
  listDeliveries(keyId: string, filter: DeliveryFilter): Promise<DeliveryPage>;
  getDelivery(keyId: string, deliveryId: string): Promise<Delivery>;
  /**
   * The key was revoked (its row says so): disables its endpoints and cancels its queued deliveries.
   * `keys revoke` does this in its own transaction; this catches revocations by other means.
   */
  keyRevoked(keyId: string): Promise<RevokedWebhooks>;
  /** stores events as the bus subscription would; resolves once they are durable */
  enqueue(events: readonly DomainEvent[]): Promise<void>;
  /** runs until nothing is in flight or due at the clock's time (tests, benches) */
  drain(): Promise<void>;
  /** deletes finished deliveries older than `beforeMs`; returns how many */
  prune(beforeMs: number): Promise<number>;
  readonly stats: WorkerStats & { failed_batches: number; rejected_events: number };
}

/** The box keyed by the config's signing_secret; webhooks cannot run without one. */
export function secretBoxFromConfig(
  config: Pick<Readonly<Config>, 'signing_secret'> & { previous_signing_secrets?: readonly string[] },
): SecretBox {
  if (!config.signing_secret)
    throw new Error('webhooks need a signing_secret: endpoint secrets are stored encrypted with a key derived from it');
  return new SecretBox(config.signing_secret, config.previous_signing_secrets);
}

export function createWebhooks(options: WebhooksOptions): Webhooks {
  const { db, bus, config } = options;
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const policy = options.targetPolicy ?? policyFromConfig(config.webhooks);
  const resolve = options.resolve ?? systemResolver;
  const secrets = options.secrets ?? secretBoxFromConfig(config);
  const deps: EndpointDeps = { policy, resolve, now, secrets };
  const log = componentLogger(options.log, 'webhooks');
  const onError =
    options.onError ?? ((err: unknown) => log.error({ err }, 'background work failed (outbox or delivery)'));
  const bodies = new BodyCache();
  const worker = new DeliveryWorker({
    db,
    clock,
    policy,
    resolve,
    bodies,
    secrets,
    timeoutMs: config.webhooks.timeout_ms,
    maxConcurrency: config.webhooks.max_concurrency,
    maxConcurrencyPerEndpoint: config.webhooks.max_concurrency_per_endpoint,
    ...(options.random ? { random: options.random } : {}),
    ...(options.stopGraceMs !== undefined ? { stopGraceMs: options.stopGraceMs } : {}),
    ...(options.onVerdict ? { onVerdict: options.onVerdict } : {}),
    onError,
  });
  const outbox = new Outbox({
    db,
    bus,
    now,
    onStored: (r) => r.deliveries > 0 && worker.wake(),
    onError,
    cache: bodies,
  });

  return {
    async start() {
      const sealing = await sealStoredSecrets(db, secrets, now());
      if (sealing.sealed || sealing.resealed)
        log.info(
          { ...sealing, key_id: secrets.keyId },
          'webhook endpoint secrets encrypted with the current signing_secret (plaintext ones sealed, previous ' +
            'ones re-encrypted)',
        );
      await db.transaction((conn) => endRevokedWebhooks(conn, Math.round(now())));
      await worker.start();
      outbox.start();
    },
    async stop() {
      await outbox.stop();
      await worker.stop();
    },
    createEndpoint: (keyId, input) => createEndpoint(db, keyId, input, deps),
    listEndpoints: (keyId) => listEndpoints(db, keyId, deps),
    getEndpoint: (keyId, id) => getEndpoint(db, keyId, id, deps),
    updateEndpoint: (keyId, id, patch) => updateEndpoint(db, keyId, id, patch, deps),
    disableEndpoint: (keyId, id) => disableEndpoint(db, keyId, id, deps),
    deleteEndpoint: (keyId, id) => deleteEndpoint(db, keyId, id, deps),
    rotateSecret: (keyId, id) => rotateSecret(db, keyId, id, deps),
    async redeliver(keyId, id, messageId) {
      const deliveryId = await redeliverMessage(db, keyId, id, messageId, deps);
      // the 202 shows the delivery as queued: read before the worker may start its first attempt
      const queued = await getDelivery(db, keyId, deliveryId);
      worker.wake();
      return queued;
    },
    listDeliveries: (keyId, filter) => listDeliveries(db, keyId, filter),
    getDelivery: (keyId, id) => getDelivery(db, keyId, id),
    keyRevoked: (keyId) => db.transaction((conn) => endRevokedWebhooks(conn, Math.round(now()), keyId)),
    enqueue: (events) => outbox.enqueue(events),
    drain: () => worker.drain(),
    prune: (beforeMs) => pruneOutbox(db, beforeMs),
    get stats() {
      return { ...worker.stats, failed_batches: outbox.failedBatches, rejected_events: outbox.rejectedEvents };
    },
  };
}
