// Delay and freshness summaries returned beside realtime rows. Pure, over the filtered set.
import type { Arrival, DelayState, Freshness } from '../../core/types.ts';
import { DELAY_STATES } from '../../core/types.ts';
import type { ApiVehicle } from '../routes/schemas.ts';

type DelayCounts = Record<DelayState, number>;

class DelayFigures {
  arrivals = 0;
  private known = 0;
  private sum = 0;
  private max: number | null = null;
  readonly states: DelayCounts = Object.fromEntries(DELAY_STATES.map((s) => [s, 0])) as DelayCounts;

  add(a: Arrival): void {
    this.arrivals++;
    this.states[a.delay_state]++;
    if (a.delay_s !== null && Number.isFinite(a.delay_s)) {
      this.known++;
      this.sum += a.delay_s;
      const d = Math.round(a.delay_s);
      this.max = this.max === null ? d : Math.max(this.max, d);
    }
  }

  figures() {
    return {
      mean_delay_s: this.known ? Math.round((this.sum / this.known) * 10) / 10 : null,
      max_delay_s: this.max,
      delay_states: { ...this.states },
    };
  }
}

function byString<T>(keyOf: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = keyOf(a);
    const y = keyOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

export function railSummaries(arrivals: readonly Arrival[], stationName: (id: string) => string | null) {
  const trains = new Map<string, { first: Arrival; count: number }>();
  const lines = new Map<string | null, { figures: DelayFigures; trips: Set<string> }>();
  const stations = new Map<string, DelayFigures>();
  for (const a of arrivals) {
    const tk = `${a.feed_id}\u0000${a.trip_id}\u0000${a.trip_instance ?? ''}`;
    const train = trains.get(tk);
    if (!train) trains.set(tk, { first: a, count: 1 });
    else {
      train.count++;
      if ((a.stop_sequence ?? Infinity) < (train.first.stop_sequence ?? Infinity)) train.first = a;
    }
    let line = lines.get(a.route_id);
    if (!line) {
      line = { figures: new DelayFigures(), trips: new Set() };
      lines.set(a.route_id, line);
    }
    line.figures.add(a);
    line.trips.add(tk);
    let station = stations.get(a.station_id);
    if (!station) {
      station = new DelayFigures();
      stations.set(a.station_id, station);
    }
    station.add(a);
  }
  return {
    trains: [...trains.values()]
      .map(({ first, count }) => ({
        trip_id: first.trip_id,
        trip_instance: first.trip_instance,
        source: first.feed_id,
        line: first.route_id,
        direction_id: first.direction_id,
        vehicle_id: first.vehicle_id,
        next_station_id: first.station_id,
        delay_s: first.delay_s === null ? null : Math.round(first.delay_s),
        delay_state: first.delay_state,
        arrivals: count,
      }))
      .sort(byString((t) => `${t.line ?? ''}\u0000${t.trip_id}\u0000${t.trip_instance ?? ''}\u0000${t.source}`)),
    lines: [...lines]
      .map(([line, { figures, trips }]) => ({
        line,
        arrivals: figures.arrivals,
        trains: trips.size,
        ...figures.figures(),
      }))
      .sort(byString((l) => l.line ?? '')),
    stations: [...stations]
      .map(([station_id, figures]) => ({
        station_id,
        name: stationName(station_id),
        arrivals: figures.arrivals,
        ...figures.figures(),
      }))
      .sort(byString((s) => s.station_id)),
  };
}

export function vehicleSummaries(vehicles: readonly ApiVehicle[]) {
  const groups = new Map<string | null, ApiVehicle[]>();
  for (const v of vehicles) {
    const list = groups.get(v.route_id);
    if (list) list.push(v);
    else groups.set(v.route_id, [v]);
  }
  const routes = [];
  const freshness = [];
  for (const [route_id, list] of groups) {
    let newest = list[0]!;
    let oldest = list[0]!;
    let known = 0;
    let sum = 0;
    const counts: Record<Freshness, number> = { fresh: 0, stale: 0, expired: 0 };
    for (const v of list) {
      if (v.age_s < newest.age_s) newest = v;
      if (v.age_s > oldest.age_s) oldest = v;
      if (v.delay_s !== null) {
        known++;
        sum += v.delay_s;
      }
      counts[v.freshness]++;
    }
    routes.push({
      route_id,
      vehicles: list.length,
      mean_delay_s: known ? Math.round((sum / known) * 10) / 10 : null,
      newest_position_at: newest.timestamp,
      oldest_position_at: oldest.timestamp,
      newest_age_s: newest.age_s,
      oldest_age_s: oldest.age_s,
    });
    freshness.push({ route_id, freshness: newest.freshness, ...counts });
  }
  const order = byString((r: { route_id: string | null }) => r.route_id ?? '');
  return { routes: routes.sort(order), freshness: freshness.sort(order) };
}
