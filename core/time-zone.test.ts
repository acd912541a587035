import t from 'tap';
import { localDate, zoneOffsetMs } from './time-zone.ts';

t.test('offsets from UTC, east positive, DST and odd offsets included', async (t) => {
  t.equal(zoneOffsetMs(Date.parse('2025-06-17T12:00:00Z'), 'America/Chicago'), -5 * 3_600_000, 'CDT');
  t.equal(zoneOffsetMs(Date.parse('2025-01-15T12:00:00Z'), 'America/Chicago'), -6 * 3_600_000, 'CST');
  t.equal(zoneOffsetMs(Date.parse('2025-06-17T12:00:00Z'), 'UTC'), 0);
  t.equal(zoneOffsetMs(Date.parse('2024-07-01T00:00:00Z'), 'Asia/Kathmandu'), (5 * 60 + 45) * 60_000);
  // sub-second instants keep whole-second offsets
  t.equal(zoneOffsetMs(Date.parse('2024-07-01T00:00:00.999Z'), 'Europe/Berlin'), 2 * 3_600_000);
  // the first instant after the spring-forward jump already has the new offset
  t.equal(zoneOffsetMs(Date.parse('2024-03-10T07:00:00Z'), 'America/New_York'), -4 * 3_600_000);
  t.equal(zoneOffsetMs(Date.parse('2024-03-10T06:59:59Z'), 'America/New_York'), -5 * 3_600_000);
});

t.test('local dates', async (t) => {
  t.equal(localDate(Date.parse('2025-06-18T04:59:00Z'), 'America/Chicago'), '2025-06-17');
  t.equal(localDate(Date.parse('2025-06-18T05:00:00Z'), 'America/Chicago'), '2025-06-18');
  t.equal(localDate(Date.parse('2024-12-31T22:00:00Z'), 'Asia/Kolkata'), '2025-01-01', 'across a year');
  t.equal(localDate(Date.parse('2024-02-29T12:00:00Z'), 'UTC'), '2024-02-29');
});
