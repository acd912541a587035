// GET /api/v1/events/stream: the persistent stream of domain events (the dotted types webhooks
// deliver), filtered by mode, route/line and type, resumable by id from the retained event log.
import { z } from 'zod';
import { EVENT_SCHEMAS, EVENT_TYPES } from '../../core/event-schemas.ts';
import { MODES } from '../../core/types.ts';
import type { EventFilter } from '../../stream/event-filter.ts';
import { enumListParam, idListParam } from '../params.ts';
import { defineRoute } from '../route.ts';
import type { RequestContext, RouteDef, StreamReply } from '../types.ts';
import { PREFIX } from './deps.ts';

export const EVENTS_STREAM_PATH = `${PREFIX}/events/stream`;

/** What the route needs from the streaming component (http/sse-routes.ts HubStreams). */
export interface EventStreamSource {
  openEvents(
    ctx: RequestContext,
    endpoint: string,
    filter: EventFilter,
    lastEventId: string | null,
  ): StreamReply | Promise<StreamReply>;
}

const DESCRIPTION = [
  'Always `text/event-stream`. Each event is named by its dotted type (`alert.created`, `vehicle.position`, ' +
    '`feed.stale`, …) and carries the event envelope `{version, id, type, timestamp, modes, routes, lines, data}` as ' +
    'JSON (the body webhooks deliver; `x-sse-events` names the schema of each event), with an increasing SSE `id` to ' +
    'resume from. The stream starts with `retry: 3000`; a `: ping` comment (with the newest `id`) follows every 15 s ' +
    '(`sse.ping_interval_s`).',
  '**Resume.** Send the last id received as the `Last-Event-ID` header (EventSource does this by itself) or ' +
    'as `last_event_id`: the events after it are replayed from the retained log (the newest events within ' +
    '`sse.event_log_max_bytes`, `sse.event_log_max_age_s` and `sse.event_log_size`, kept across restarts), then ' +
    'live events follow. An id older than the log, ' +
    'or unknown, gets `event: reset` (data `{reason, earliest_id}`) and the response header ' +
    '`Last-Event-ID: earliest`. A replay larger than the client buffer is sent in parts: the response ends ' +
    'after each part and the next reconnection continues.',
  '**Limits.** Each key may hold as many concurrent event streams as its plan allows (Free none: 403 ' +
    '`forbidden_plan`; Regular 2, Max 25; one more: 429 `sse_allowance_exceeded`). Each stream is metered ' +
    'one connection-minute per started minute. A connection lives at most `sse.max_connection_s` ' +
    '(default 3,600 s; each ends between 90% and 100% of it); a client more than `sse.buffer_bytes` ' +
    '(default 1 MiB) behind, or whose unsent data makes no progress for `sse.stall_timeout_s` (default 20 s), ' +
    'is disconnected; when the clients that do not read together hold more than `sse.send_budget_bytes`, the ' +
    'longest-stalled are disconnected first. In every case the client reconnects and resumes by id.',
  '**Changes, not states.** `arrival.updated` is sent only for a trip whose predictions changed, and carries its ' +
    'new or changed rows in `arrivals`, the stops no longer predicted in `removed_stops` (`{stop_id, ' +
    'stop_sequence}`), `stop_count`, and `partial` (false when `arrivals` is the whole trip). Merge rows by ' +
    '`(stop_sequence, stop_id)`.',
].join('\n\n');

/** `event: reset` on the event stream: the id to resume from is no longer held. */
export const StreamResetSchema = z
  .object({
    reason: z.literal('last_event_id_unknown'),
    earliest_id: z
      .string()
      .nullable()
      .meta({ description: 'The oldest id the log still holds; null when it holds none.' }),
  })
  .meta({
    id: 'StreamReset',
    description: 'Sent instead of a replay when the id to resume from is older than the retained log, or unknown.',
  });

export function eventRoutes(source: EventStreamSource): RouteDef[] {
  return [
    defineRoute({
      id: 'streamEvents',
      method: 'GET',
      path: EVENTS_STREAM_PATH,
      summary: 'Persistent event stream',
      description: DESCRIPTION,
      tags: ['Events'],
      auth: 'key',
      meter: 'connection-minute',
      stream: true,
      contentType: 'text/event-stream',
      errors: ['sse_allowance_exceeded'],
      query: z.object({
        mode: enumListParam(MODES, 'Only events concerning these modes.').optional(),
        route: idListParam('Only events concerning these bus or streetcar routes (with `line`: either).', '39', {
          kind: 'route',
          modes: ['bus', 'streetcar'],
          noun: 'route',
        }).optional(),
        line: idListParam('Only events concerning these rail lines (with `route`: either).', 'Red', {
          kind: 'route',
          modes: ['rail'],
          noun: 'line',
        }).optional(),
        types: enumListParam(EVENT_TYPES, 'Only these event types.').optional(),
      }),
      response: z.string().meta({ description: 'Server-sent events.' }),
      streamEvents: {
        ...Object.fromEntries(EVENT_TYPES.map((type) => [type, EVENT_SCHEMAS[type]])),
        reset: StreamResetSchema,
      },
      handler(ctx) {
        const q = ctx.query;
        const routes = [...(q.route ?? []), ...(q.line ?? [])];
        // last_event_id is one of the parameters every stream route gets (http/compile.ts)
        const lastEventId =
          ctx.headers['last-event-id'] ?? (ctx.query as { last_event_id?: string }).last_event_id ?? null;
        return source.openEvents(ctx, EVENTS_STREAM_PATH, { modes: q.mode, routes, types: q.types }, lastEventId);
      },
    }),
  ];
}
