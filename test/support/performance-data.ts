// Stop events of bus 39 on the reliability test schedule (./reliability-data.ts), with figures
// known by construction: each day trips 39_a (30 s late at each of its three stops) and 39_b
// (400 s late: late), 2 h apart as scheduled, a 30 s dwell at the middle stop, 20 min end to end.
import type { StopEvent } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';
import { createHistoryWriter } from '../../store/history-writer.ts';
import { datesBetween, FIRST_DAY, LAST_FINALIZED, TODAY } from './reliability-data.ts';

const offset = (date: string) => Date.parse(`${date}T00:00:00-04:00`); // EDT all along

function tripEvents(date: string, trip: string, startH: number, lateS: number): StopEvent[] {
  const origin = offset(date) + startH * 3_600_000;
  return [0, 1, 2].map((i) => {
    const scheduled = origin + i * 600_000;
    const arrival = scheduled + lateS * 1000;
    const first = i === 0;
    const last = i === 2;
    return {
      feed_id: 'demo-vp',
      schedule_id: 'demo',
      service_date: date,
      trip_id: trip,
      trip_instance: null,
      route_id: '39',
      mode: 'bus',
      direction_id: 0,
      stop_id: `S${i + 1}`,
      station_id: `S${i + 1}`,
      stop_sequence: i + 1,
      vehicle_id: `bus-${trip}`,
      scheduled_arrival_ms: scheduled,
      scheduled_departure_ms: scheduled,
      actual_arrival_ms: arrival,
      actual_departure_ms: first || last ? arrival : arrival + 30_000,
      source: first || last ? 'imputed' : 'vp',
      arrival_source: first ? 'imputed' : 'vp',
      departure_source: last ? 'imputed' : 'vp',
      arrival_delay_s: lateS,
      departure_delay_s: first || last ? lateS : lateS + 30,
      dwell_s: first || last ? null : 30,
      travel_s: first ? null : 570,
      scheduled_travel_s: first ? null : 600,
      headway_s: trip === '39_b' ? 7_200 + 370 : null,
      scheduled_headway_s: trip === '39_b' ? 7_200 : null,
      relationship: 'scheduled',
      in_schedule: true,
      first_stop: first,
      last_stop: last,
      prediction_errors: i === 1 ? [{ horizon: '0-3', error_s: 20, samples: 3 }] : [],
      written_ms: arrival + 60_000,
    };
  });
}

/** Every day FIRST_DAY..LAST_FINALIZED and TODAY; before seedReliability, whose finalize stores them. */
export async function seedStopEvents(db: Db): Promise<void> {
  const events = [...datesBetween(FIRST_DAY, LAST_FINALIZED), TODAY].flatMap((date) => [
    ...tripEvents(date, '39_a', 6, 30),
    ...tripEvents(date, '39_b', 8, 400),
  ]);
  await createHistoryWriter(db).write({
    vehicles: [],
    arrivals: [],
    trips: [],
    alertVersions: [],
    polls: [],
    stopEvents: events,
  });
}
