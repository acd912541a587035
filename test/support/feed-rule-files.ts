// Small GTFS-Realtime files built on the real Caltrain schedule (../shared/fixtures-real/caltrain/ct.zip):
// one clean snapshot that breaks no feed rule, and for each rule a copy of it changed so that it
// breaks exactly that rule. Trip 501 (route L5, direction 0) calls at 70271, 70261, 70241 … from
// 05:00; its vehicle rides on its shape (p_1277346).
import { join } from 'node:path';
import type { ScheduleIndex } from '../../core/ports.ts';
import { Db } from '../../store/db.ts';
import { importGtfs } from '../../store/gtfs-import.ts';
import { loadScheduleIndex } from '../../store/schedule-index.ts';
import { FIXTURES_REAL } from './fixtures-real.ts';
import { encodeFeed } from './pipeline-fakes.ts';

/** 2023-11-08T01:05:34Z, the header of Caltrain's captured trip updates */
export const T = 1_699_405_534;

type Json = Record<string, unknown>;

export async function loadCaltrain(): Promise<{ schedule: ScheduleIndex; db: Db }> {
  const db = await Db.open(':memory:');
  await importGtfs(db, 'ct', join(FIXTURES_REAL, 'caltrain', 'ct.zip'));
  return { schedule: await loadScheduleIndex(db, 'ct'), db };
}

/** A point of trip 501's shape, halfway along it. */
export function onShape(schedule: ScheduleIndex): { lat: number; lon: number } {
  const shape = schedule.tripShape!('501')!;
  const mid = Math.floor(shape.lat.length / 2);
  return { lat: shape.lat[mid]!, lon: shape.lon[mid]! };
}

const trip = (): Json => ({
  trip_id: '501',
  route_id: 'L5',
  direction_id: 0,
  start_time: '05:00:00',
  start_date: '20231107',
  schedule_relationship: 0,
});

const update = (seq: number, stop: string, at: number): Json => ({
  stop_sequence: seq,
  stop_id: stop,
  arrival: { time: at },
  departure: { time: at + 30 },
  schedule_relationship: 0,
});

/** The clean snapshot: a trip update, its vehicle on its shape, an alert on its route. */
export function cleanMessage(schedule: ScheduleIndex, headerS: number = T): Json {
  const at = onShape(schedule);
  return {
    header: { gtfs_realtime_version: '2.0', incrementality: 0, timestamp: headerS },
    entity: [
      {
        id: 'tu-501',
        trip_update: {
          trip: trip(),
          vehicle: { id: 'car-1' },
          timestamp: headerS - 5,
          stop_time_update: [update(1, '70271', T + 600), update(2, '70261', T + 1_020), update(3, '70241', T + 1_380)],
        },
      },
      {
        id: 'vp-501',
        vehicle: {
          trip: trip(),
          vehicle: { id: 'car-1', label: '501' },
          position: { latitude: at.lat, longitude: at.lon, bearing: 150, speed: 12 },
          stop_id: '70261',
          current_status: 2,
          timestamp: headerS - 5,
        },
      },
      {
        id: 'alert-1',
        alert: {
          active_period: [{ start: T - 3_600, end: T + 3_600 }],
          informed_entity: [{ route_id: 'L5' }, { stop_id: '70261' }],
          cause: 9,
          effect: 3,
          header_text: { translation: [{ text: 'Track work', language: 'en' }] },
        },
      },
    ],
  };
}

const clone = (m: Json): Json => structuredClone(m);
const entity = (m: Json, id: string): Json => (m.entity as Json[]).find((e) => e.id === id)!;
const tu = (m: Json): Json => entity(m, 'tu-501').trip_update as Json;
const vp = (m: Json): Json => entity(m, 'vp-501').vehicle as Json;
const stus = (m: Json): Json[] => tu(m).stop_time_update as Json[];
const position = (m: Json): Json => vp(m).position as Json;
const alert = (m: Json): Json => entity(m, 'alert-1').alert as Json;

/** How one rule's file is built and read. */
export interface RuleCase {
  rule: string;
  /** the snapshots, in order: the finding is in the last; those before are clean (sequence rules) */
  messages: (schedule: ScheduleIndex) => Json[];
  /** this server's clock for the clock rules: the file is polled over HTTP */
  now_s?: number;
}

function changed(fn: (m: Json, schedule: ScheduleIndex) => void): (schedule: ScheduleIndex) => Json[] {
  return (schedule) => {
    const m = clone(cleanMessage(schedule));
    fn(m, schedule);
    return [m];
  };
}

export const RULE_CASES: readonly RuleCase[] = [
  {
    rule: 'E001',
    messages: changed((m) => {
      (m.header as Json).timestamp = T * 1000;
    }),
  },
  {
    rule: 'E002',
    messages: changed((m) => {
      const [a, b, c] = stus(m) as [Json, Json, Json];
      // stop 3 before stop 2, the times still rising in the order given
      tu(m).stop_time_update = [
        a,
        { ...c, arrival: b.arrival, departure: b.departure },
        { ...b, arrival: c.arrival, departure: c.departure },
      ];
    }),
  },
  { rule: 'E003', messages: changed((m) => void ((tu(m).trip as Json).trip_id = 'no-such-trip')) },
  { rule: 'E004', messages: changed((m) => void ((tu(m).trip as Json).route_id = 'no-such-route')) },
  { rule: 'E011', messages: changed((m) => void (stus(m)[1]!.stop_id = '99999')) },
  { rule: 'E012', messages: changed((m) => void (tu(m).timestamp = T + 10)) },
  { rule: 'E016', messages: changed((m) => void ((tu(m).trip as Json).schedule_relationship = 1)) },
  {
    rule: 'E017',
    messages: (schedule) => {
      const first = cleanMessage(schedule);
      const second = clone(first);
      (stus(second)[2]!.arrival as Json).time = T + 1_390;
      return [first, second];
    },
  },
  { rule: 'E018', messages: (schedule) => [cleanMessage(schedule), cleanMessage(schedule, T - 30)] },
  { rule: 'E020', messages: changed((m) => void ((tu(m).trip as Json).start_time = '5:00')) },
  { rule: 'E021', messages: changed((m) => void ((tu(m).trip as Json).start_date = '2023-11-07')) },
  { rule: 'E022', messages: changed((m) => void (stus(m)[1] = update(2, '70261', T + 610))) },
  { rule: 'E024', messages: changed((m) => void ((tu(m).trip as Json).direction_id = 1)) },
  {
    rule: 'E025',
    messages: changed((m) => void ((stus(m)[1]!.departure as Json).time = T + 1_020 - 60)),
  },
  { rule: 'E026', messages: changed((m) => void (position(m).latitude = 100)) },
  { rule: 'E027', messages: changed((m) => void (position(m).bearing = 400)) },
  {
    rule: 'E028',
    messages: changed((m) => {
      position(m).latitude = 40.7128;
      position(m).longitude = -74.006;
    }),
  },
  {
    rule: 'E029',
    // two kilometres east of the line, still within a mile of the stops' box
    messages: changed((m, schedule) => void (position(m).longitude = onShape(schedule).lon + 0.025)),
  },
  { rule: 'E032', messages: changed((m) => void (alert(m).informed_entity = [])) },
  { rule: 'E033', messages: changed((m) => void (alert(m).informed_entity = [{ route_id: 'L5' }, {}])) },
  { rule: 'E035', messages: changed((m) => void ((tu(m).trip as Json).route_id = 'L1')) },
  {
    rule: 'E036',
    messages: changed((m) => void (stus(m)[2] = update(2, '70241', T + 1_380))),
  },
  {
    rule: 'E037',
    messages: changed((m) => void (stus(m)[2] = update(3, '70261', T + 1_380))),
  },
  { rule: 'E038', messages: changed((m) => void ((m.header as Json).gtfs_realtime_version = '3.0')) },
  { rule: 'E039', messages: changed((m) => void (entity(m, 'vp-501').is_deleted = false)) },
  {
    rule: 'E040',
    messages: changed((m) => {
      delete stus(m)[1]!.stop_sequence;
      delete stus(m)[1]!.stop_id;
    }),
  },
  { rule: 'E041', messages: changed((m) => void (tu(m).stop_time_update = [])) },
  { rule: 'E042', messages: changed((m) => void (stus(m)[1]!.schedule_relationship = 2)) },
  {
    rule: 'E043',
    messages: changed((m) => {
      delete stus(m)[1]!.arrival;
      delete stus(m)[1]!.departure;
    }),
  },
  { rule: 'E044', messages: changed((m) => void (stus(m)[1]!.arrival = {})) },
  { rule: 'E048', messages: changed((m) => void delete (m.header as Json).timestamp) },
  { rule: 'E049', messages: changed((m) => void delete (m.header as Json).incrementality) },
  // the header two minutes ahead of the clock that polls it
  { rule: 'E050', messages: (schedule) => [cleanMessage(schedule, T + 120)], now_s: T },
  {
    rule: 'E052',
    messages: changed((m) => {
      const second = structuredClone(entity(m, 'vp-501'));
      second.id = 'vp-501b';
      (m.entity as Json[]).push(second);
    }),
  },
  { rule: 'W001', messages: changed((m) => void delete tu(m).timestamp) },
  { rule: 'W002', messages: changed((m) => void delete tu(m).vehicle) },
  { rule: 'W004', messages: changed((m) => void (position(m).speed = 40)) },
  { rule: 'W006', messages: changed((m) => void delete (vp(m).trip as Json).trip_id) },
  { rule: 'W007', messages: (schedule) => [cleanMessage(schedule), cleanMessage(schedule, T + 40)] },
  // received two minutes after its header
  { rule: 'W008', messages: (schedule) => [cleanMessage(schedule)], now_s: T + 120 },
  { rule: 'W009', messages: changed((m) => void delete (tu(m).trip as Json).schedule_relationship) },
];

export const encodeMessage = (m: Json): Uint8Array => encodeFeed(m);
