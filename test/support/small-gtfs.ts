// A tiny GTFS feed whose calendar runs every day around today, in two versions that differ by
// their trip count: what schedule refresh tests swap. Built in memory, written as a zip.
import { writeFileSync } from 'node:fs';
import { buildZip } from '../../fixtures/zip-write.ts';

export interface SmallGtfsOptions {
  /** trips per route per day (each route gets as many) */
  trips: number;
  /** YYYYMMDD */
  start: string;
  end: string;
  timezone?: string;
  feedVersion?: string;
}

/** Route `R1` (bus) and line `L1` (rail), `trips` trips each, every day from start to end. */
export function smallGtfs(o: SmallGtfsOptions): Record<string, string> {
  const trips: string[] = [];
  const stopTimes: string[] = [];
  for (const route of ['R1', 'L1']) {
    for (let i = 0; i < o.trips; i++) {
      const id = `${route}-${i + 1}`;
      trips.push(`${route},ALL,${id},${i % 2}`);
      const h = 6 + (i % 16);
      stopTimes.push(`${id},1,S1,${h}:00:00,${h}:00:00`, `${id},2,S2,${h}:30:00,${h}:30:00`);
    }
  }
  return {
    'agency.txt':
      `agency_id,agency_name,agency_url,agency_timezone\nA,Small,` +
      `https://example.org,${o.timezone ?? 'America/Chicago'}\n`,
    'routes.txt': 'route_id,route_short_name,route_type\nR1,1,3\nL1,Line,2\n',
    'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,41.0,-87.0\nS2,Second,41.1,-87.1\n',
    'trips.txt': `route_id,service_id,trip_id,direction_id\n${trips.join('\n')}\n`,
    'stop_times.txt': `trip_id,stop_sequence,stop_id,arrival_time,departure_time\n${stopTimes.join('\n')}\n`,
    'calendar.txt':
      `service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nALL,1,` +
      `1,1,1,1,1,1,${o.start},${o.end}\n`,
    'feed_info.txt':
      `feed_publisher_name,feed_publisher_url,feed_lang,feed_start_date,feed_end_date,` +
      `feed_version\nSmall,https://example.org,en,${o.start},${o.end},${o.feedVersion ?? 'v1'}\n`,
  };
}

export function smallGtfsZip(o: SmallGtfsOptions): Buffer {
  return buildZip(Object.entries(smallGtfs(o)).map(([name, data]) => ({ name, data })));
}

export function writeSmallGtfsZip(path: string, o: SmallGtfsOptions): string {
  writeFileSync(path, smallGtfsZip(o));
  return path;
}

/** YYYYMMDD of today shifted by `days` (UTC calendar; tests keep their ranges wide). */
export function gtfsDate(days: number, from = Date.now()): string {
  return new Date(from + days * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
}
