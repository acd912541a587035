// GTFS-RT Alert entities → alert content.
import {
  CAUSE_NAMES,
  EFFECT_NAMES,
  SEVERITY_NAMES,
  has,
  int64,
  type FeedEntityMsg,
  type TranslatedStringMsg,
} from './gtfs-rt-types.ts';
import { alertScope, sortPeriods, type AlertContent, type InformedEntity } from './alert-content.ts';
import { secondsToMs, type NormalizeContext } from './normalize-context.ts';
import type { ActivePeriod } from '../core/types.ts';

/** Translations by language; a translation without a language is 'und' (BCP 47 "undetermined"). */
export function translations(ts: TranslatedStringMsg | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of ts?.translation ?? []) {
    if (!t.text) continue;
    const language = t.language || 'und';
    if (!(language in out)) out[language] = t.text;
  }
  return out;
}

function periodBound(value: Parameters<typeof int64>[0]): number | null {
  const s = int64(value);
  return s && s > 0 ? secondsToMs(s).ms : null;
}

export function normalizeAlerts(entities: readonly FeedEntityMsg[], ctx: NormalizeContext): AlertContent[] {
  const out: AlertContent[] = [];
  for (const entity of entities) {
    const a = entity.alert!;
    const informed: InformedEntity[] = (a.informed_entity ?? []).map((e) => ({
      route_id: e.route_id || null,
      route_type: has(e, 'route_type') ? (e.route_type ?? null) : null,
      stop_id: e.stop_id || null,
      trip_id: e.trip?.trip_id || null,
      trip_route_id: e.trip?.route_id || null,
    }));
    const periods: ActivePeriod[] = (a.active_period ?? []).map((p) => ({
      start_ms: has(p, 'start') ? periodBound(p.start) : null,
      end_ms: has(p, 'end') ? periodBound(p.end) : null,
    }));
    const scope = alertScope(informed, ctx.schedule, ctx.default_mode ?? null);
    out.push({
      id: `${ctx.feed_id}:${entity.id!}`,
      feed_id: ctx.feed_id,
      schedule_id: ctx.schedule_id,
      entity_id: entity.id!,
      modes: scope.modes,
      impact: EFFECT_NAMES[a.effect ?? 8] ?? 'unknown_effect',
      cause: CAUSE_NAMES[a.cause ?? 1] ?? 'unknown_cause',
      severity: has(a, 'severity_level') ? (SEVERITY_NAMES[a.severity_level ?? 1] ?? null) : null,
      header: translations(a.header_text),
      description: translations(a.description_text),
      url: translations(a.url),
      active_periods: sortPeriods(periods),
      routes: scope.routes,
      stations: scope.stations,
      trips: scope.trips,
    });
  }
  return out;
}
