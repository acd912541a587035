// A small network with every case the API must show: two rail lines, three bus routes, two
// streetcar routes, arrivals in every delay state, vehicles of several ages, alerts of every
// status across modes and sources.
import { Directory, type DirectoryRoute } from '../../http/read/directory.ts';
import { FakeLive, makeAlert, makeArrival, makeFeed, makeVehicle } from './fake-live.ts';

export const NOW = 1_714_580_000_000;

function route(mode: DirectoryRoute['mode'], route_id: string, long_name: string, route_type: number): DirectoryRoute {
  return {
    schedule: 'demo',
    agency_name: 'Demo Transit',
    route_id,
    mode,
    short_name: route_id,
    long_name,
    color: '112233',
    text_color: 'FFFFFF',
    route_type,
  };
}

export function demoDirectory(): Directory {
  const stopNames = new Map<string, string | null>([
    ['place-pktrm', 'Park Street'],
    ['place-dwnxg', 'Downtown Crossing'],
    ['place-gover', 'Government Center'],
    ['place-state', 'State'],
  ]);
  return new Directory({
    routes: [
      route('rail', 'Red', 'Red Line', 1),
      route('rail', 'Blue', 'Blue Line', 1),
      route('bus', '39', 'Forest Hills - Back Bay', 3),
      route('bus', '66', 'Harvard - Nubian', 3),
      route('bus', '1', 'Harvard - Nubian via Mass Ave', 3),
      route('streetcar', 'E', 'Green Line E', 0),
      route('streetcar', 'F', 'Fairmount Streetcar', 0),
    ],
    stopNames,
    lineStations: new Map([
      [
        'Red',
        [
          { station_id: 'place-pktrm', name: 'Park Street' },
          { station_id: 'place-dwnxg', name: 'Downtown Crossing' },
        ],
      ],
      [
        'Blue',
        [
          { station_id: 'place-gover', name: 'Government Center' },
          { station_id: 'place-state', name: 'State' },
        ],
      ],
    ]),
  });
}

export function demoLive(): FakeLive {
  const live = new FakeLive();
  live.feedList = [
    makeFeed({ feed_id: 'rail-tu' }),
    makeFeed({ feed_id: 'bus-vp' }),
    makeFeed({
      feed_id: 'streetcar-vp',
      freshness: 'stale',
      last_status: 'timeout',
      last_error: 'timed out after 10 s',
    }),
    makeFeed({ feed_id: 'alerts', kind: 'alerts-json' }),
  ];
  live.arrivalList = [
    makeArrival({
      trip_id: 'T1',
      station_id: 'place-pktrm',
      stop_sequence: 1,
      delay_s: 60,
      delay_state: 'on_time',
      vehicle_id: 'R-1',
    }),
    makeArrival({
      trip_id: 'T1',
      station_id: 'place-dwnxg',
      stop_sequence: 2,
      delay_s: 400,
      delay_state: 'late',
      vehicle_id: 'R-1',
    }),
    makeArrival({
      trip_id: 'T2',
      station_id: 'place-pktrm',
      stop_sequence: 3,
      delay_s: -120,
      delay_state: 'early',
      direction_id: 1,
      vehicle_id: 'R-2',
    }),
    makeArrival({
      trip_id: 'T3',
      route_id: 'Blue',
      station_id: 'place-gover',
      stop_sequence: 1,
      delay_s: null,
      delay_state: 'canceled',
      trip_relationship: 'canceled',
      predicted_ms: null,
    }),
    makeArrival({
      trip_id: 'T3',
      route_id: 'Blue',
      station_id: 'place-state',
      stop_id: 'state-nb',
      stop_sequence: 2,
      delay_s: null,
      delay_state: 'skipped',
      predicted_ms: null,
    }),
    makeArrival({
      trip_id: 'T4',
      route_id: 'Blue',
      station_id: 'place-state',
      stop_sequence: 1,
      delay_s: null,
      delay_state: 'unknown',
      predicted_ms: null,
      in_schedule: false,
      trip_relationship: 'added',
    }),
    makeArrival({
      trip_id: 'B1',
      feed_id: 'bus-tu',
      route_id: '39',
      mode: 'bus',
      station_id: 'stop-1',
      stop_sequence: 4,
      delay_s: 120,
    }),
  ];
  live.vehicleList = [
    makeVehicle({ vehicle_id: 'b1', route_id: '39', trip_id: 'B1', feed_id: 'bus-tu', timestamp_ms: NOW - 10_000 }),
    makeVehicle({ vehicle_id: 'b2', route_id: '39', timestamp_ms: NOW - 30_000 }),
    makeVehicle({ vehicle_id: 'b3', route_id: '66', timestamp_ms: NOW - 200_000 }),
    makeVehicle({ vehicle_id: 'b4', route_id: '1', timestamp_ms: NOW - 900_000 }),
    makeVehicle({
      vehicle_id: 's1',
      route_id: 'E',
      mode: 'streetcar',
      feed_id: 'streetcar-vp',
      timestamp_ms: NOW - 5_000,
    }),
    makeVehicle({
      vehicle_id: 's2',
      route_id: 'F',
      mode: 'streetcar',
      feed_id: 'streetcar-vp',
      timestamp_ms: NOW - 20_000,
    }),
  ];
  live.alertList = [
    makeAlert({
      id: 'alerts:a1',
      modes: ['rail'],
      routes: ['Red'],
      stations: ['place-pktrm'],
      impact: 'significant_delays',
      first_seen_ms: NOW - 1_000,
    }),
    makeAlert({
      id: 'alerts:a2',
      modes: ['rail'],
      routes: ['Blue'],
      status: 'upcoming',
      impact: 'no_service',
      first_seen_ms: NOW - 2_000,
    }),
    makeAlert({ id: 'alerts:a3', modes: ['bus'], routes: ['39'], impact: 'detour', first_seen_ms: NOW - 3_000 }),
    makeAlert({
      id: 'alerts:a4',
      modes: ['bus'],
      routes: ['66'],
      status: 'resolved',
      resolved_ms: NOW - 500,
      impact: 'reduced_service',
      first_seen_ms: NOW - 4_000,
    }),
    makeAlert({
      id: 'alerts:a5',
      modes: ['streetcar'],
      routes: ['E'],
      stations: ['place-pktrm'],
      impact: 'no_service',
      first_seen_ms: NOW - 5_000,
    }),
    makeAlert({
      id: 'other:a6',
      modes: ['bus', 'streetcar'],
      routes: ['1', 'F'],
      impact: 'detour',
      first_seen_ms: NOW - 6_000,
    }),
    makeAlert({
      id: 'other:a7',
      modes: ['rail', 'bus'],
      routes: ['Red', '39'],
      status: 'upcoming',
      impact: 'stop_moved',
      first_seen_ms: NOW - 6_000,
    }),
  ];
  return live;
}
