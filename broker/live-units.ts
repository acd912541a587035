// The live state cut into units that change apart, for the broker: a vehicle, a trip's arrivals
// (the rows of one TripUpdate), an alert, and the feeds' health (one unit: it moves on every poll
// and its order is the config's). The ingest node sends the units that changed since its last
// send; an edge holds them by key and rebuilds each slice's list from its units when it moved.
// Within a unit the rows keep their order; across units the order is the edge's own, which no
// reader depends on (the API sorts by identity: http/read/live-index.ts).
import type { LiveView } from '../core/ports.ts';
import { MODES, type Alert, type Arrival, type VehiclePosition } from '../core/types.ts';

export const PUBLISHED_SLICES = [...MODES.map((m) => `vehicles:${m}` as const), 'arrivals', 'alerts', 'feeds'] as const;
export type PublishedSlice = (typeof PUBLISHED_SLICES)[number];

const SEP = '\u001f';

/** The slice a unit key belongs to (keys are `<slice>` or `<slice>\x1f<identity>`). */
export function sliceOfKey(key: string): PublishedSlice | null {
  const end = key.indexOf(SEP);
  const slice = end === -1 ? key : key.slice(0, end);
  return (PUBLISHED_SLICES as readonly string[]).includes(slice) ? (slice as PublishedSlice) : null;
}

/** The rows of one slice as the LiveView has them now. */
export function sliceRows(live: LiveView, slice: PublishedSlice): readonly unknown[] {
  if (slice === 'arrivals') return live.arrivals();
  if (slice === 'alerts') return live.alerts();
  if (slice === 'feeds') return live.feeds();
  return live.vehicles(slice.slice('vehicles:'.length) as (typeof MODES)[number]);
}

function unitKey(slice: PublishedSlice, row: unknown): string {
  if (slice === 'feeds') return slice;
  if (slice === 'alerts') return `${slice}${SEP}${(row as Alert).id}`;
  if (slice === 'arrivals') {
    const a = row as Arrival;
    return `${slice}${SEP}${a.feed_id}${SEP}${a.service_date ?? ''}${SEP}${a.trip_id}${SEP}${a.trip_instance ?? ''}`;
  }
  const v = row as VehiclePosition;
  return `${slice}${SEP}${v.feed_id}${SEP}${v.vehicle_id}`;
}

/** A slice's rows by unit key, each unit's rows in their order (a repeated identity stays in its unit). */
export function unitsOf(slice: PublishedSlice, rows: readonly unknown[]): Map<string, unknown[]> {
  const units = new Map<string, unknown[]>();
  if (slice === 'feeds') {
    units.set(slice, [...rows]);
    return units;
  }
  // a trip's rows come one after another: the key is built once per run of rows
  let run: unknown[] | undefined;
  let last: Arrival | undefined;
  for (const row of rows) {
    if (slice === 'arrivals' && run && last && sameTrip(last, row as Arrival)) {
      run.push(row);
      continue;
    }
    const key = unitKey(slice, row);
    run = units.get(key);
    if (!run) {
      run = [];
      units.set(key, run);
    }
    run.push(row);
    last = slice === 'arrivals' ? (row as Arrival) : undefined;
  }
  return units;
}

function sameTrip(a: Arrival, b: Arrival): boolean {
  return (
    a.feed_id === b.feed_id &&
    a.trip_id === b.trip_id &&
    a.service_date === b.service_date &&
    a.trip_instance === b.trip_instance
  );
}

export interface UnitChanges {
  /** unit key and its rows as JSON text */
  set: Array<[string, string]>;
  del: string[];
}

/**
 * The ingest node's memory of what the broker holds, unit by unit, as JSON text: a slice that
 * moved is compared unit by unit, and only the units whose text changed are sent. A row object
 * seen before (the feeds not polled since, an alert that did not change) is not serialized again.
 */
export class UnitMemory {
  private readonly sent = new Map<PublishedSlice, Map<string, string>>();
  private rowText = new WeakMap<object, string>();

  /** What changed in `slice` since the last call; remembered as sent. */
  diff(slice: PublishedSlice, rows: readonly unknown[], changes: UnitChanges): void {
    const before = this.sent.get(slice) ?? new Map<string, string>();
    const after = new Map<string, string>();
    for (const [key, unit] of unitsOf(slice, rows)) {
      const text = `[${unit.map((row) => this.text(row)).join(',')}]`;
      after.set(key, text);
      if (before.get(key) !== text) changes.set.push([key, text]);
    }
    for (const key of before.keys()) if (!after.has(key)) changes.del.push(key);
    this.sent.set(slice, after);
  }

  /** Every unit held, as sent (for a full rewrite of the broker's copy). */
  all(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const units of this.sent.values()) for (const entry of units) out.push(entry);
    return out;
  }

  /** Forgets everything: the next diff sends every unit. */
  clear(): void {
    this.sent.clear();
    this.rowText = new WeakMap();
  }

  private text(row: unknown): string {
    if (typeof row !== 'object' || row === null) return JSON.stringify(row);
    let text = this.rowText.get(row);
    if (text === undefined) {
      text = JSON.stringify(row);
      this.rowText.set(row, text);
    }
    return text;
  }
}
