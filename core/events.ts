import { randomBytes } from 'node:crypto';
import { EVENT_VERSION, type EventData, type EventEnvelope, type EventType } from './event-schemas.ts';
import { componentLogger, type Logger } from './logger.ts';
import { MODES, type Mode } from './types.ts';
import { isoRequired } from './dates.ts';

export { EVENT_TYPES, type EventData, type EventEnvelope, type EventType } from './event-schemas.ts';

/**
 * A change in the service's state, as shared by the event stream and webhooks: on the bus, the
 * envelope of core/event-schemas.ts with its time in epoch ms (`at_ms`); `toEnvelope` gives the
 * wire form both channels send.
 */
export type DomainEvent<K extends EventType = EventType> = {
  [T in K]: {
    /** unique per event; the envelope's `id` and the webhook-id */
    id: string;
    type: T;
    /** epoch ms when the change was observed */
    at_ms: number;
    modes: Mode[];
    /** bus and streetcar route ids the event concerns */
    routes: string[];
    /** rail line ids the event concerns */
    lines: string[];
    data: EventData<T>;
  };
}[K];

export interface EventScope {
  modes: readonly Mode[];
  routes?: readonly string[];
  lines?: readonly string[];
}

// ids unique across processes and restarts without a random draw per event (vehicle positions
// come by the thousand): a random prefix per process, then a counter
const ID_PREFIX = `evt_${randomBytes(6).toString('base64url')}`;
let idCounter = 0;

export function newEventId(): string {
  return `${ID_PREFIX}${(++idCounter).toString(36)}`;
}

/** Builds an event whose data is checked, at compile time, against its type's schema. */
export function domainEvent<K extends EventType>(
  type: K,
  atMs: number,
  scope: EventScope,
  data: EventData<K>,
): DomainEvent<K> {
  return {
    id: newEventId(),
    type,
    at_ms: atMs,
    modes: [...scope.modes],
    routes: [...(scope.routes ?? [])],
    lines: [...(scope.lines ?? [])],
    data,
  } as DomainEvent<K>;
}

/** Splits route ids by mode into the envelope's `routes` (bus, streetcar) and `lines` (rail). */
export function scopeOf(entries: Iterable<{ mode: Mode | null; id: string | null }>): Required<EventScope> {
  const scope = new ScopeBuilder();
  for (const { mode, id } of entries) scope.add(mode, id);
  return scope.build();
}

/** scopeOf one at a time, without a list of entries (a poll's thousands of rows). */
export class ScopeBuilder {
  private readonly modes = new Set<Mode>();
  private readonly routes = new Set<string>();
  private readonly lines = new Set<string>();

  add(mode: Mode | null, id: string | null): void {
    if (mode) this.modes.add(mode);
    if (id) (mode === 'rail' ? this.lines : this.routes).add(id);
  }

  build(): Required<EventScope> {
    return {
      modes: MODES.filter((m) => this.modes.has(m)),
      routes: [...this.routes].sort(),
      lines: [...this.lines].sort(),
    };
  }
}

/**
 * domainEvent scoped as scopeOf scopes one row's mode and route, without its sets, and its lists
 * built once rather than built and then copied: an event per vehicle or trip, thousands a poll.
 */
export function rowEvent<K extends EventType>(
  type: K,
  atMs: number,
  mode: Mode | null,
  routeId: string | null,
  data: EventData<K>,
): DomainEvent<K> {
  return {
    id: newEventId(),
    type,
    at_ms: atMs,
    modes: mode && MODES.includes(mode) ? [mode] : [],
    routes: routeId && mode !== 'rail' ? [routeId] : [],
    lines: routeId && mode === 'rail' ? [routeId] : [],
    data,
  } as DomainEvent<K>;
}

/** The wire form: what the stream sends as `data:` and webhooks as the signed body. */
export function toEnvelope(event: DomainEvent): EventEnvelope {
  return {
    version: EVENT_VERSION,
    id: event.id,
    type: event.type,
    timestamp: isoRequired(event.at_ms),
    modes: event.modes,
    routes: event.routes,
    lines: event.lines,
    data: event.data,
  } as EventEnvelope;
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
