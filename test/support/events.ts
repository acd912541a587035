// Events for tests of the transport (event log, hub, outbox, worker): they carry whatever data
// the test wants to follow (a sequence number, padding) and are typed as events only here.
// Tests of what producers publish use the producers, and the schemas validate their data.
import { newEventId, type DomainEvent, type EventType } from '../../core/events.ts';
import type { Mode } from '../../core/types.ts';

export interface RawEventFields {
  id?: string;
  at_ms?: number;
  modes?: Mode[];
  routes?: string[];
  lines?: string[];
  data?: unknown;
}

export function rawEvent(type: EventType, over: RawEventFields = {}): DomainEvent {
  return {
    id: over.id ?? newEventId(),
    type,
    at_ms: over.at_ms ?? Date.now(),
    modes: over.modes ?? [],
    routes: over.routes ?? [],
    lines: over.lines ?? [],
    data: over.data ?? {},
  } as DomainEvent;
}
