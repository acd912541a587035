import { componentLogger, type Logger } from './logger.ts';
import type { Mode } from './types.ts';

export const EVENT_TYPES = [
  'alert.created', 'alert.updated', 'alert.resolved',
  'vehicle.position', 'arrival.updated', 'trip.canceled',
  'feed.stale', 'feed.recovered', 'reliability.updated',
  'export.ready', 'export.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A change in the service's state, as shared by the event stream and webhooks. */
export interface DomainEvent<T = unknown> {
  type: EventType;
  /** epoch ms when the change was observed */
  at_ms: number;
  modes: Mode[];
  /** bus/streetcar route ids or rail line ids the event concerns */
  routes: string[];
  data: T;
}

export type Unsubscribe = () => void;

/**
 * The one seam between producers and consumers of events. In one process it is in-memory;
 * a multi-node deploy swaps in a broker-backed implementation (NATS JetStream, Redis streams).
 */
export interface EventBus {
  publish(event: DomainEvent): void;
  /** Batches: every event published during one tick arrives in one call, in order. */
  subscribe(handler: (events: readonly DomainEvent[]) => void): Unsubscribe;
}

export class InMemoryEventBus implements EventBus {
  private readonly handlers = new Set<(events: readonly DomainEvent[]) => void>();
  private pending: DomainEvent[] = [];
  private scheduled = false;
  private readonly log: Logger;

  constructor(options: { log?: Logger } = {}) {
    this.log = componentLogger(options.log, 'events');
  }

  publish(event: DomainEvent): void {
    this.pending.push(event);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  subscribe(handler: (events: readonly DomainEvent[]) => void): Unsubscribe {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    for (const handler of this.handlers) {
      try {
        handler(batch);
      } catch (err) {
        // one failing consumer must not starve the others
        this.log.error({ err }, 'event handler failed');
      }
    }
  }
}
