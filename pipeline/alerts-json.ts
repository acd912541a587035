// The `alerts-json` feed kind: alerts for agencies without GTFS-RT alerts. Documented in
// pipeline/ALERTS-JSON.md. Shape, in short:
//
//   {
//     "timestamp": 1700000000 | "2023-11-14T22:13:20Z",   // optional: when the file was produced
//     "alerts": [{
//       "id": "elevator-42",                                // required, stable across polls
//       "effect": "NO_SERVICE",                             // GTFS-RT Effect name, any case; default unknown_effect
//       "cause": "MAINTENANCE",                             // GTFS-RT Cause name, any case; default unknown_cause
//       "severity": "WARNING",                              // optional: info | warning | severe | unknown_severity
//       "header": {"en": "…", "es": "…"} | "…",             // required; a bare string is language 'und'
//       "description": {…} | "…", "url": {…} | "…",         // optional
//       "active_periods": [{"start": <time|null>, "end": <time|null>}],  // optional; none = always
//       "informed_entities": [{"route_id"?, "route_type"?, "stop_id"?, "trip_id"?}]  // at least one
//     }]
//   }
//
// Times are POSIX seconds or ISO 8601 with an offset. A body that is not this envelope fails the
// poll (invalid_alerts_json); one bad alert inside a good envelope is rejected alone.
import { z } from 'zod';
import { CAUSE_NAMES, EFFECT_NAMES, SEVERITY_NAMES } from './gtfs-rt-types.ts';
import { alertScope, sortPeriods, type AlertContent } from './alert-content.ts';
import { judgeHeader, secondsToMs, type NormalizeContext } from './normalize-context.ts';
import { rejectedSnapshot, type NormalizedPoll, type NormalizeInput } from './normalize-feed.ts';
import { TripMatcher } from './trip-matching/match.ts';

const enumName = (names: Record<number, string>) => {
  const allowed = new Set(Object.values(names));
  return z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => allowed.has(s), {
      message: `one of ${[...allowed].join(', ')}`,
    });
};

const time = z.union([
  z.number().positive().finite(),
  z
    .string()
    .datetime({ offset: true })
    .transform((s) => Date.parse(s) / 1000),
]);

const texts = z.union([
  z
    .string()
    .min(1)
    .transform((s) => ({ und: s })),
  z.record(z.string().min(1).max(35), z.string().min(1)),
]);

const InformedEntity = z
  .object({
    agency_id: z.string().optional(),
    route_id: z.string().min(1).optional(),
    route_type: z.number().int().nonnegative().optional(),
    stop_id: z.string().min(1).optional(),
    trip_id: z.string().min(1).optional(),
    direction_id: z.number().int().min(0).max(1).optional(),
  })
  .strict()
  .refine((e) => e.route_id || e.route_type !== undefined || e.stop_id || e.trip_id || e.agency_id, {
    message: 'names no route, route_type, stop, trip or agency',
  });

export const AlertsJsonAlert = z
  .object({
    id: z.string().min(1).max(200),
    effect: enumName(EFFECT_NAMES).default('unknown_effect'),
    cause: enumName(CAUSE_NAMES).default('unknown_cause'),
    severity: enumName(SEVERITY_NAMES).optional(),
    header: texts,
    description: texts.optional(),
    url: texts.optional(),
    active_periods: z
      .array(
        z
          .object({
            start: time.nullable().optional(),
            end: time.nullable().optional(),
          })
          .strict(),
      )
      .default([]),
    informed_entities: z.array(InformedEntity).min(1),
  })
  .strict();

// alerts are parsed one by one so a bad alert costs only itself
export const AlertsJsonEnvelope = z
  .object({
    timestamp: time.optional(),
    alerts: z.array(z.unknown()),
  })
  .passthrough();

export type AlertsJsonAlert = z.infer<typeof AlertsJsonAlert>;

export type AlertsJsonResult = { ok: true; poll: NormalizedPoll } | { ok: false; error: string };

export function normalizeAlertsJson(body: Uint8Array, input: NormalizeInput): AlertsJsonResult {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` };
  }
  const envelope = AlertsJsonEnvelope.safeParse(raw);
  if (!envelope.success) {
    return {
      ok: false,
      error: envelope.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    };
  }
  // alerts name no trip to match; the context's matcher only completes the type
  const ctx: NormalizeContext = { ...input, header_ms: null, matcher: input.matcher ?? new TripMatcher() };
  let reported: number | null = null;
  if (envelope.data.timestamp !== undefined) {
    const { ms, wasMs } = secondsToMs(envelope.data.timestamp);
    if (wasMs) ctx.rejects.add('header_timestamp_ms');
    reported = ms;
    const rejection = judgeHeader(ms, wasMs, ctx);
    if (rejection) {
      const n = envelope.data.alerts.length;
      return {
        ok: true,
        poll: rejectedSnapshot(
          {
            header_timestamp_ms: ms,
            entities: n,
            vehicle_entities: 0,
            trip_update_entities: 0,
            alert_entities: n,
          },
          rejection,
          ctx,
        ),
      };
    }
    ctx.header_ms = ms;
  }
  const alerts: AlertContent[] = [];
  const ids = new Set<string>();
  for (const item of envelope.data.alerts) {
    const parsed = AlertsJsonAlert.safeParse(item);
    if (!parsed.success) {
      ctx.rejects.add('invalid_alerts_json');
      continue;
    }
    if (ids.has(parsed.data.id)) {
      ctx.rejects.add('duplicate_entity');
      continue;
    }
    ids.add(parsed.data.id);
    alerts.push(toContent(parsed.data, ctx));
  }
  return {
    ok: true,
    poll: {
      header_timestamp_ms: reported,
      entities: envelope.data.alerts.length,
      vehicle_entities: 0,
      trip_update_entities: 0,
      alert_entities: envelope.data.alerts.length,
      vehicles: [],
      arrivals: [],
      trips: [],
      alerts,
      rejected: ctx.rejects.counts,
      matching: null,
    },
  };
}

function toContent(a: AlertsJsonAlert, ctx: NormalizeContext): AlertContent {
  const scope = alertScope(
    a.informed_entities.map((e) => ({
      route_id: e.route_id ?? null,
      route_type: e.route_type ?? null,
      stop_id: e.stop_id ?? null,
      trip_id: e.trip_id ?? null,
      trip_route_id: null,
    })),
    ctx.schedule,
    ctx.default_mode ?? null,
  );
  const bound = (t: number | null | undefined): number | null => (t == null ? null : secondsToMs(t).ms);
  return {
    id: `${ctx.feed_id}:${a.id}`,
    feed_id: ctx.feed_id,
    schedule_id: ctx.schedule_id,
    entity_id: a.id,
    modes: scope.modes,
    impact: a.effect,
    cause: a.cause,
    severity: a.severity ?? null,
    header: a.header,
    description: a.description ?? {},
    url: a.url ?? {},
    active_periods: sortPeriods(a.active_periods.map((p) => ({ start_ms: bound(p.start), end_ms: bound(p.end) }))),
    routes: scope.routes,
    stations: scope.stations,
    trips: scope.trips,
  };
}
