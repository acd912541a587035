import t from 'tap';
import { localDate } from '../core/time-zone.ts';
import { candidateServiceDates, parseGtfsTime, parseStartDate, serviceDayOriginMs } from './service-time.ts';

const iso = (ms: number) => new Date(ms).toISOString();

t.test('the GTFS time origin is noon minus 12 h, which moves on DST days', async (t) => {
  t.equal(iso(serviceDayOriginMs('2023-11-07', 'America/Los_Angeles')), '2023-11-07T08:00:00.000Z', 'midnight PST');
  // spring forward: noon EDT is 16:00Z, so the origin is 04:00Z = 23:00 EST the evening before
  t.equal(iso(serviceDayOriginMs('2023-03-12', 'America/New_York')), '2023-03-12T04:00:00.000Z');
  // fall back: noon EST is 17:00Z, origin 05:00Z = 01:00 EDT
  t.equal(iso(serviceDayOriginMs('2023-11-05', 'America/New_York')), '2023-11-05T05:00:00.000Z');
  t.equal(iso(serviceDayOriginMs('2024-06-01', 'UTC')), '2024-06-01T00:00:00.000Z');
  t.equal(iso(serviceDayOriginMs('2024-06-01', 'Asia/Kolkata')), '2024-05-31T18:30:00.000Z');
  t.equal(serviceDayOriginMs('2024-06-01', 'Asia/Kolkata'), serviceDayOriginMs('2024-06-01', 'Asia/Kolkata'), 'cached');
});

t.test('the origin in Chicago, where the demo network runs', async (t) => {
  const origin = (date: string) => new Date(serviceDayOriginMs(date, 'America/Chicago')).toISOString();
  t.equal(origin('2025-06-17'), '2025-06-17T05:00:00.000Z', 'CDT midnight');
  t.equal(origin('2025-01-15'), '2025-01-15T06:00:00.000Z', 'CST midnight');
  // spring forward: noon CDT is 17:00Z, so the origin is 05:00Z, one hour before local midnight
  t.equal(origin('2025-03-09'), '2025-03-09T05:00:00.000Z');
  // fall back: noon CST is 18:00Z, origin 06:00Z is 01:00 CDT
  t.equal(origin('2025-11-02'), '2025-11-02T06:00:00.000Z');
});

t.test('local dates and candidate service dates', async (t) => {
  const ms = Date.parse('2023-11-08T07:30:00Z');
  t.equal(localDate(ms, 'America/Los_Angeles'), '2023-11-07');
  t.equal(localDate(ms, 'UTC'), '2023-11-08');
  t.same(candidateServiceDates(ms, 'America/Los_Angeles'), ['2023-11-06', '2023-11-07', '2023-11-08']);
  t.same(candidateServiceDates(Date.parse('2024-03-01T12:00:00Z'), 'UTC'), ['2024-02-29', '2024-03-01', '2024-03-02']);
});

t.test('GTFS-RT start_date and start_time parsing', async (t) => {
  t.equal(parseStartDate('20231107'), '2023-11-07');
  t.equal(parseStartDate('20230230'), null, 'no such day');
  t.equal(parseStartDate('2023-11-07'), null);
  t.equal(parseStartDate(undefined), null);
  t.equal(parseGtfsTime('25:10:05'), 25 * 3600 + 605);
  t.equal(parseGtfsTime('8:00:00'), 8 * 3600);
  t.equal(parseGtfsTime('08:60:00'), null);
  t.equal(parseGtfsTime(''), null);
});

