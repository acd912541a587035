// Trip shapes (shapes.txt) held in memory for the feed rules (a vehicle far from its trip's
// shape, E029): every point packed into two Float32Arrays (a metre's precision, half the memory
// of doubles), one view per shape shared by the trips that use it.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ShapeLine } from '../core/ports.ts';

export type TripShapes = (tripId: string) => ShapeLine | undefined;

const NO_SHAPES: TripShapes = () => undefined;

async function* rows(conn: DuckDBConnection, sql: string, scheduleId: string): AsyncGenerator<unknown[]> {
  const result = await conn.stream(sql, [scheduleId]);
  for await (const batch of result.yieldRowsJs()) yield* batch;
}

export async function loadTripShapes(conn: DuckDBConnection, scheduleId: string): Promise<TripShapes> {
  const total = Number(
    (
      await conn.runAndReadAll('SELECT count(*) FROM gtfs_shapes WHERE schedule_id = $1', [scheduleId])
    ).getRowsJS()[0]![0],
  );
  if (total === 0) return NO_SHAPES;
  const lat = new Float32Array(total);
  const lon = new Float32Array(total);
  const shapes = new Map<string, ShapeLine>();
  let i = 0;
  let current: string | null = null;
  let start = 0;
  const close = (): void => {
    if (current !== null && i > start)
      shapes.set(current, Object.freeze({ lat: lat.subarray(start, i), lon: lon.subarray(start, i) }));
  };
  for await (const [id, la, lo] of rows(
    conn,
    `SELECT shape_id, shape_pt_lat, shape_pt_lon FROM gtfs_shapes WHERE schedule_id = $1
     ORDER BY shape_id, shape_pt_sequence`,
    scheduleId,
  )) {
    if (i >= total) break; // rows committed after the count are left for the next load
    const shapeId = String(id);
    if (shapeId !== current) {
      close();
      current = shapeId;
      start = i;
    }
    lat[i] = Number(la);
    lon[i] = Number(lo);
    i++;
  }
  close();
  const byTrip = new Map<string, ShapeLine>();
  for await (const [trip, shape] of rows(
    conn,
    'SELECT trip_id, shape_id FROM gtfs_trips WHERE schedule_id = $1 AND shape_id IS NOT NULL',
    scheduleId,
  )) {
    const line = shapes.get(String(shape));
    if (line) byTrip.set(String(trip), line);
  }
  return (tripId) => byTrip.get(tripId);
}
