// Small feeds that break the rules the way real agencies do, for the trip matching tests: an
// NYCT-style subway schedule in the two shapes it is published in, buses past midnight, and
// realtime TripUpdates with NYCT ids and the NYCT extension.
import { encodeFeed, header } from './pipeline-fakes.ts';

/** Monday 2024-05-06 in New York (EDT, UTC−4). The Weekday service runs Monday to Friday. */
export const MONDAY = '2024-05-06';
export const TUESDAY = '2024-05-07';
/** 06:05 EDT on Monday */
export const MONDAY_MORNING_MS = Date.parse('2024-05-06T10:05:00Z');
/** 00:35 EDT on Tuesday: Monday's late trips are still running */
export const TUESDAY_NIGHT_MS = Date.parse('2024-05-07T04:35:00Z');

const COMMON: Record<string, string> = {
  'agency.txt':
    'agency_id,agency_name,agency_url,agency_timezone\nMTA NYCT,MTA New York City ' +
    'Transit,https://new.mta.info,America/New_York\n',
  'routes.txt': 'route_id,agency_id,route_short_name,route_type\n1,MTA NYCT,1,1\n2,MTA NYCT,2,1\nB44,MTA NYCT,B44,3\n',
  'stops.txt':
    'stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station\n101,Van Cortlandt ' +
    'Park,40.889,-73.898,1,\n101N,Van Cortlandt Park,40.889,-73.898,0,101\n101S,Van Cortlandt ' +
    'Park,40.889,-73.898,0,101\n103,238 St,40.884,-73.900,1,\n103N,238 St,40.884,-73.900,0,103\n103S,238 ' +
    'St,40.884,-73.900,0,103\n201,Wakefield,40.903,-73.850,1,\n201S,Wakefield,40.903,-73.850,0,201\n204,Nereid ' +
    'Av,40.898,-73.854,1,\n204S,Nereid Av,40.898,-73.854,0,204\nB1,Flatbush Av,40.63,-73.95,,\nB2,Nostrand ' +
    'Av,40.62,-73.94,,\n',
  'calendar.txt':
    'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n' +
    'Weekday,1,1,1,1,1,0,0,20240101,20241231\n' +
    'MondayOnly,1,0,0,0,0,0,0,20240101,20241231\n',
};

/** A bus trip leaving at 00:30 after Monday's service day, written 24:30:00 (two services). */
const BUS_TRIPS =
  'B44,Weekday,B44-late,Flatbush,0\nB44,Weekday,B44-late2,Flatbush,0\n' +
  'B44,MondayOnly,B44-monday-late,Flatbush,0\nB44,Weekday,B44-morning,Flatbush,0\n';
const BUS_STOP_TIMES =
  'B44-late,1,B1,24:30:00,24:30:00\nB44-late,2,B2,24:40:00,24:40:00\n' +
  'B44-late2,1,B1,24:50:00,24:50:00\nB44-late2,2,B2,25:00:00,25:00:00\n' +
  'B44-monday-late,1,B1,25:00:00,25:00:00\nB44-monday-late,2,B2,25:10:00,25:10:00\n' +
  'B44-morning,1,B1,06:00:00,06:00:00\nB44-morning,2,B2,06:10:00,06:10:00\n';

/**
 * The agency's own static GTFS: origin time and path inside each trip id. Two 2 trains leave
 * Wakefield at 06:00:30 on different paths (07R, 08R); a 1 train leaves at 24:10:00 on Monday's
 * service, and at 06:10:00.
 */
export function nyctEmbeddedGtfs(): Record<string, string> {
  return {
    ...COMMON,
    'trips.txt':
      'route_id,service_id,trip_id,trip_headsign,direction_id\n' +
      '2,Weekday,AFA24GEN-2043-Weekday-00_036050_2..S07R,Flatbush Av,1\n' +
      '2,Weekday,AFA24GEN-2043-Weekday-00_036050_2..S08R,Flatbush Av,1\n' +
      '1,Weekday,AFA24GEN-1037-Weekday-00_145000_1..N03R,Van Cortlandt Park,0\n' +
      '1,Weekday,AFA24GEN-1037-Weekday-00_037000_1..N03R,Van Cortlandt Park,0\n' +
      BUS_TRIPS,
    'stop_times.txt':
      'trip_id,stop_sequence,stop_id,arrival_time,departure_time\n' +
      'AFA24GEN-2043-Weekday-00_036050_2..S07R,1,201S,06:00:30,06:00:30\nAFA24GEN-2043-Weekday-00_036050_2..S07R,2,' +
      '204S,06:02:30,06:02:30\n' +
      'AFA24GEN-2043-Weekday-00_036050_2..S08R,1,201S,06:00:30,06:00:30\nAFA24GEN-2043-Weekday-00_036050_2..S08R,2,' +
      '204S,06:03:00,06:03:00\n' +
      'AFA24GEN-1037-Weekday-00_145000_1..N03R,1,103N,24:10:00,24:10:00\nAFA24GEN-1037-Weekday-00_145000_1..N03R,2,' +
      '101N,24:12:00,24:12:00\n' +
      'AFA24GEN-1037-Weekday-00_037000_1..N03R,1,103N,06:10:00,06:10:00\nAFA24GEN-1037-Weekday-00_037000_1..N03R,2,' +
      '101N,06:12:00,06:12:00\n' +
      BUS_STOP_TIMES,
  };
}

/**
 * As re-publishers write it: plain trip ids, the agency's id without its origin in an extra
 * `mta_trip_id` column, the origin being the trip's first departure.
 */
export function nyctColumnGtfs(): Record<string, string> {
  return {
    ...COMMON,
    'trips.txt':
      'route_id,service_id,trip_id,trip_headsign,direction_id,mta_trip_id\n' +
      '2,Weekday,2-0600-a,Flatbush Av,1,2..S07R\n' +
      '2,Weekday,2-0600-b,Flatbush Av,1,2..S08R\n' +
      '1,Weekday,1-2410,Van Cortlandt Park,0,1..N03R\n' +
      '1,Weekday,1-0610,Van Cortlandt Park,0,1..N03R\n' +
      BUS_TRIPS.replace(/\n/g, ',\n'),
    'stop_times.txt':
      'trip_id,stop_sequence,stop_id,arrival_time,departure_time\n' +
      '2-0600-a,1,201S,06:00:30,06:00:30\n2-0600-a,2,204S,06:02:30,06:02:30\n' +
      '2-0600-b,1,201S,06:00:30,06:00:30\n2-0600-b,2,204S,06:03:00,06:03:00\n' +
      '1-2410,1,103N,24:10:00,24:10:00\n1-2410,2,101N,24:12:00,24:12:00\n' +
      '1-0610,1,103N,06:10:00,06:10:00\n1-0610,2,101N,06:12:00,06:12:00\n' +
      BUS_STOP_TIMES,
  };
}

const unix = (iso: string): number => Date.parse(iso) / 1000;

/** NYCT's extension on a TripDescriptor, as protobufjs names it. */
const nyct = (trainId: string, direction: 1 | 3) => ({
  '.transit_realtime.nyct_trip_descriptor': { train_id: trainId, is_assigned: true, direction },
});

/**
 * Monday morning TripUpdates with NYCT ids: one per path of the 06:00:30 2 train, one without
 * a path (both fit: ambiguous), one for a trip the schedule does not have.
 */
export function nyctMorningFeed(): Uint8Array {
  const stu = (stop: string, iso: string) => ({
    stop_id: stop,
    arrival: { time: unix(iso) },
    departure: { time: unix(iso) },
  });
  return encodeFeed({
    header: {
      ...header(MONDAY_MORNING_MS / 1000),
      gtfs_realtime_version: '1.0',
      '.transit_realtime.nyct_feed_header': {
        nyct_subway_version: '1.0',
        trip_replacement_period: [{ route_id: '2', replacement_period: { end: MONDAY_MORNING_MS / 1000 + 1800 } }],
      },
    },
    entity: [
      {
        id: '1',
        trip_update: {
          trip: { trip_id: '036050_2..S07R', route_id: '2', start_date: '20240506', ...nyct('02 0600+ 241/FLA', 3) },
          stop_time_update: [stu('204S', '2024-05-06T10:03:30Z')],
        },
      },
      {
        id: '2',
        trip_update: {
          trip: { trip_id: '036050_2..S08R', route_id: '2', start_date: '20240506', ...nyct('02 0600+ 241/NEW', 3) },
          stop_time_update: [stu('204S', '2024-05-06T10:03:00Z')],
        },
      },
      {
        id: '3',
        trip_update: {
          trip: { trip_id: '036050_2..S', route_id: '2', start_date: '20240506' },
          stop_time_update: [stu('204S', '2024-05-06T10:03:00Z')],
        },
      },
      {
        id: '4',
        trip_update: {
          trip: { trip_id: '037000_1..N03R', route_id: '1', start_date: '20240506', ...nyct('01 0610 242/SFY', 1) },
          stop_time_update: [stu('101N', '2024-05-06T10:12:30Z')],
        },
      },
      {
        id: '5',
        trip_update: {
          trip: { trip_id: '039900_1..N03R', route_id: '1', start_date: '20240506' },
          stop_time_update: [stu('101N', '2024-05-06T10:42:00Z')],
        },
      },
    ],
  });
}

/**
 * Tuesday 00:35: trips of Monday's service past 24:00, published with start_date = Tuesday,
 * the calendar day. A 1 train with an NYCT id (origin 001000 = 00:10:00), a bus named by its
 * id with start_time 00:30:00, a bus of a Monday-only service without start_time, and a bus
 * named by route, direction and start time (00:50:00) only. Each arrives a minute or two late.
 */
export function pastMidnightFeed(): Uint8Array {
  const stu = (stop: string, iso: string) => ({ stop_id: stop, arrival: { time: unix(iso) } });
  return encodeFeed({
    header: header(TUESDAY_NIGHT_MS / 1000),
    entity: [
      {
        id: 'n1',
        trip_update: {
          trip: { trip_id: '001000_1..N03R', route_id: '1', start_date: '20240507' },
          stop_time_update: [stu('101N', '2024-05-07T04:13:00Z')],
        },
      },
      {
        id: 'b1',
        trip_update: {
          trip: { trip_id: 'B44-late', start_date: '20240507', start_time: '00:30:00' },
          stop_time_update: [stu('B2', '2024-05-07T04:41:00Z')],
        },
      },
      {
        id: 'b2',
        trip_update: {
          trip: { trip_id: 'B44-monday-late', start_date: '20240507' },
          stop_time_update: [stu('B2', '2024-05-07T05:12:00Z')],
        },
      },
      {
        id: 'b3',
        trip_update: {
          trip: { route_id: 'B44', direction_id: 0, start_date: '20240507', start_time: '00:50:00' },
          stop_time_update: [stu('B2', '2024-05-07T05:01:00Z')],
        },
      },
    ],
  });
}
