import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildZip } from '../../fixtures/zip-write.ts';

// A tiny hand-written GTFS feed with the quirks real feeds have: a BOM, CRLF, quoted fields
// with commas and quotes, extra columns, ragged rows, columns in odd order, single-digit and
// past-24 hours, one malformed time and one malformed route_type.

export const SMALL_FEED: Record<string, string> = {
  'agency.txt':
    '\uFEFFagency_id,agency_name,agency_url,agency_timezone,agency_phone\r\n' +
    'A,"Metro, Inc.",https://example.org,Europe/Paris,+33 1\r\n',
  'routes.txt':
    'route_type,route_id,route_short_name,route_long_name,route_color,route_extra\n' +
    '0,TRAM,T1,"Tram ""One""",FF0000,x\n' +
    '1,METRO,M1,Metro,,x\n' +
    '2,RER,A,Regional,,x\n' +
    '3,BUS,42,Bus,,x\n' +
    '4,FERRY,F,Ferry,,x\n' +
    '109,SUB,S,Suburban,,x\n' +
    '204,COACH,C,Coach,,x\n' +
    '900,LR,L,Light rail,,x\n' +
    '1100,AIR,Air,Air,,x\n' +
    'x,BROKEN,?,Broken type,,x\n',
  'stops.txt':
    'stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station\n' +
    'STA,"Central, Main Hall",48.85,2.35,1,\n' +
    'P1,Central platform 1,48.851,2.351,0,STA\n' +
    'P2,Second,48.86,2.36,,\n' +
    'P3,Third,48.87,2.37\n',
  'trips.txt':
    'route_id,service_id,trip_id,trip_headsign,direction_id,shape_id,block_id\n' +
    'METRO,WEEK,T1,North,0,SH1,B1\n' +
    'METRO,WEEK,T2,South,1\n' +
    'BUS,SAT,T3,"Night, late",0,,\n' +
    'TRAM,EXTRA,T4,Special,,,\n',
  'stop_times.txt':
    'trip_id,stop_sequence,stop_id,arrival_time,departure_time\r\n' +
    'T1,2,P2,8:10:00,8:11:00\r\n' +
    'T1,1,P1,8:00:00,08:00:30\r\n' +
    'T1,3,P3,,\r\n' +
    'T1,4,STA,8:30:00,8:30:00\r\n' +
    'T2,1,P3,23:50:00,23:50:00\r\n' +
    'T2,2,P1,25:10:05,25:10:05\r\n' +
    'T3,1,P1,7:5,7:05:00\r\n',
  'calendar.txt':
    'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n' +
    'WEEK,1,1,1,1,1,0,0,20240101,20241231\n' +
    'SAT,0,0,0,0,0,1,0,20240101,20241231\n',
  'calendar_dates.txt':
    'service_id,date,exception_type\n' + 'WEEK,20240501,2\n' + 'SAT,20240501,1\n' + 'EXTRA,20240714,1\n',
  'README.txt': 'not a GTFS file\n',
};

export function writeFeedFolder(dir: string, files: Record<string, string> = SMALL_FEED): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

export function feedZip(files: Record<string, string> = SMALL_FEED, prefix = ''): Buffer {
  return buildZip(Object.entries(files).map(([name, data]) => ({ name: `${prefix}${name}`, data })));
}
