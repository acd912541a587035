import t from 'tap';
import type { Arrival } from '../core/types.ts';
import { diffTripArrivals } from './arrivals.ts';

const row = (seq: number | null, stop: string, predicted: number | null, over: Partial<Arrival> = {}): Arrival => ({
  feed_id: 'f',
  trip_id: 't',
  trip_instance: null,
  route_id: 'r',
  mode: 'bus',
  station_id: stop,
  stop_id: stop,
  stop_sequence: seq,
  direction_id: 0,
  service_date: '2024-01-01',
  scheduled_ms: 0,
  predicted_ms: predicted,
  delay_s: null,
  delay_state: 'unknown',
  trip_relationship: 'scheduled',
  in_schedule: true,
  vehicle_id: null,
  observed_ms: 1,
  ...over,
});

t.test('diffTripArrivals: unchanged, reordered, moved, platform changes, cancellations', async (t) => {
  const before = [row(1, 'a', 10), row(2, 'b', 20), row(3, 'c', 30)];
  t.equal(
    diffTripArrivals(
      before,
      before.map((r) => ({ ...r, observed_ms: 99 })),
    ),
    null,
    'only observed_ms moved: no change',
  );
  t.equal(
    diffTripArrivals(before, [before[2]!, before[0]!, before[1]!]),
    null,
    'the same rows in another order: no change',
  );
  t.same(diffTripArrivals(undefined, before), { changed: before, removed: [] }, 'a new trip: every row');
  t.equal(diffTripArrivals(undefined, []), null);

  const platform = diffTripArrivals(before, [row(1, 'a', 10), row(2, 'b2', 20), row(3, 'c', 30)])!;
  t.same(
    platform.changed.map((r) => r.stop_id),
    ['b2'],
    'another platform at sequence 2 is another stop',
  );
  t.same(platform.removed, [{ stop_id: 'b', stop_sequence: 2 }]);

  const unsequenced = diffTripArrivals([row(null, 'x', 5), row(null, 'y', 6)], [row(null, 'x', 5), row(null, 'y', 7)])!;
  t.same(
    unsequenced.changed.map((r) => [r.stop_id, r.predicted_ms]),
    [['y', 7]],
    'stops without a sequence are told apart by id',
  );

  const canceled = diffTripArrivals(
    before,
    before.map((r) => ({
      ...r,
      predicted_ms: null,
      delay_state: 'canceled' as const,
      trip_relationship: 'canceled' as const,
    })),
  )!;
  t.equal(canceled.changed.length, 3, 'a cancellation changes every row');
  t.same(canceled.removed, []);
});
