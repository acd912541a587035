// Stop events into `stop_events`, in the poll's history transaction (store/history-writer.ts
// appends them with the poll's other rows), and the marks the trip tracker resumes from after a
// restart: which trip instances are stored through which stop.
import type { WrittenTrip } from '../core/ports.ts';
import type { StopEvent } from '../core/types.ts';
import type { ColumnDef } from './chunk-append.ts';
import type { Db } from './db.ts';

export const STOP_EVENT_COLUMNS: readonly ColumnDef<StopEvent>[] = [
  { name: 'feed_id', kind: 'varchar', get: (r) => r.feed_id },
  { name: 'schedule_id', kind: 'varchar', get: (r) => r.schedule_id },
  { name: 'service_date', kind: 'date', get: (r) => r.service_date },
  { name: 'trip_id', kind: 'varchar', get: (r) => r.trip_id },
  { name: 'trip_instance', kind: 'varchar', get: (r) => r.trip_instance },
  { name: 'route_id', kind: 'varchar', get: (r) => r.route_id },
  { name: 'mode', kind: 'varchar', get: (r) => r.mode },
  { name: 'direction_id', kind: 'integer', get: (r) => r.direction_id },
  { name: 'stop_id', kind: 'varchar', get: (r) => r.stop_id },
  { name: 'station_id', kind: 'varchar', get: (r) => r.station_id },
  { name: 'stop_sequence', kind: 'integer', get: (r) => r.stop_sequence },
  { name: 'vehicle_id', kind: 'varchar', get: (r) => r.vehicle_id },
  { name: 'scheduled_arrival_at', kind: 'timestamptz', get: (r) => r.scheduled_arrival_ms },
  { name: 'scheduled_departure_at', kind: 'timestamptz', get: (r) => r.scheduled_departure_ms },
  { name: 'actual_arrival_at', kind: 'timestamptz', get: (r) => r.actual_arrival_ms },
  { name: 'actual_departure_at', kind: 'timestamptz', get: (r) => r.actual_departure_ms },
  { name: 'source', kind: 'varchar', get: (r) => r.source },
  { name: 'arrival_source', kind: 'varchar', get: (r) => r.arrival_source },
  { name: 'departure_source', kind: 'varchar', get: (r) => r.departure_source },
  { name: 'arrival_delay_s', kind: 'integer', get: (r) => r.arrival_delay_s },
  { name: 'departure_delay_s', kind: 'integer', get: (r) => r.departure_delay_s },
  { name: 'dwell_s', kind: 'integer', get: (r) => r.dwell_s },
  { name: 'travel_s', kind: 'integer', get: (r) => r.travel_s },
  { name: 'scheduled_travel_s', kind: 'integer', get: (r) => r.scheduled_travel_s },
  { name: 'headway_s', kind: 'integer', get: (r) => r.headway_s },
  { name: 'scheduled_headway_s', kind: 'integer', get: (r) => r.scheduled_headway_s },
  { name: 'relationship', kind: 'varchar', get: (r) => r.relationship },
  { name: 'in_schedule', kind: 'boolean', get: (r) => r.in_schedule },
  { name: 'first_stop', kind: 'boolean', get: (r) => r.first_stop },
  { name: 'last_stop', kind: 'boolean', get: (r) => r.last_stop },
  {
    name: 'prediction_errors',
    kind: 'struct_list',
    // NULL: no prediction was judged (none made, or no vehicle report to judge it against)
    get: (r) => (r.prediction_errors.length ? r.prediction_errors : null),
  },
  { name: 'written_at', kind: 'timestamptz', get: (r) => r.written_ms },
];

/**
 * Trip instances with stop events of service days `from`..`to` (YYYY-MM-DD), each with the last
 * stop_sequence stored (and the stops stored without one): the trip tracker starts each after it,
 * so a restart or an archive replayed again never writes a stop twice. Stops are written in
 * order, so the last is the highest.
 */
export async function loadWrittenTrips(db: Db, from: string, to: string): Promise<WrittenTrip[]> {
  const rows = await db.all<{
    group_id: string;
    service_date: string;
    trip_id: string;
    trip_instance: string | null;
    stop_sequence: number | null;
    stop_ids: string[] | null;
  }>(
    `SELECT coalesce(schedule_id, 'feed:' || feed_id) AS group_id, strftime(service_date, '%Y-%m-%d') AS service_date,
       trip_id, trip_instance, max(stop_sequence) AS stop_sequence,
       list(stop_id) FILTER (WHERE stop_sequence IS NULL) AS stop_ids
     FROM stop_events
     WHERE service_date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)
     GROUP BY ALL`,
    [from, to],
  );
  return rows.map((r) => ({
    group: r.group_id,
    service_date: r.service_date,
    trip_id: r.trip_id,
    trip_instance: r.trip_instance,
    stop_sequence: r.stop_sequence === null ? null : Number(r.stop_sequence),
    stop_ids: r.stop_ids ? [...r.stop_ids] : [],
  }));
}
