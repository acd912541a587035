import t from 'tap';
import {
  addDays,
  instantText,
  iso,
  isoOr,
  isoRequired,
  utcDate,
  candidateServiceDates,
  completeThrough,
  dateRange,
  daysBetween,
  epochDay,
  formatGtfsTime,
  gtfsDate,
  isoDate,
  isoWeekdayOfEpochDay,
  isoWeekLabelOfEpochDay,
  dateOfEpochDay,
  isServiceDate,
  isTimeZone,
  localDate,
  parseClock,
  parseGtfsTime,
  parseStartDate,
  serviceDayOriginMs,
  wallClock,
  weekday,
  weekdayOfEpochDay,
  zoneOffsetMs,
} from './dates.ts';

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

t.test('service dates are calendar strings', async (t) => {
  t.ok(isServiceDate('2024-02-29'));
  t.notOk(isServiceDate('2023-02-29'));
  t.notOk(isServiceDate('2024-1-01'));
  t.notOk(isServiceDate(20240101));
  t.equal(addDays('2024-12-31', 1), '2025-01-01');
  t.equal(addDays('2024-03-10', -1), '2024-03-09');
  t.equal(daysBetween('2024-03-09', '2024-03-11'), 2, 'a DST change day is still one day');
  t.throws(() => addDays('tomorrow', 1), RangeError);
  t.ok(isTimeZone('America/Chicago'));
  t.notOk(isTimeZone('Mars/Olympus'));
  t.notOk(isTimeZone(''));
  t.throws(() => parseClock('24:00'), RangeError);
});

t.test('the day over boundary follows the local wall clock on DST change days', async (t) => {
  const tz = 'America/Chicago';
  t.same(
    wallClock(new Date('2024-03-10T08:30:00Z'), tz),
    { date: '2024-03-10', minutes: 3 * 60 + 30 },
    '03:30 CDT, after the jump',
  );
  // spring forward: 2024-03-10 has 23 hours; day 03-09 ends at 04:00 CDT on 03-10 (09:00Z)
  t.equal(completeThrough(new Date('2024-03-10T08:59:00Z'), tz, '04:00'), '2024-03-08');
  t.equal(completeThrough(new Date('2024-03-10T09:00:00Z'), tz, '04:00'), '2024-03-09');
  // fall back: 2024-11-03 has 25 hours; day 11-02 ends at 04:00 CST on 11-03 (10:00Z)
  t.equal(completeThrough(new Date('2024-11-03T09:59:00Z'), tz, '04:00'), '2024-11-01');
  t.equal(completeThrough(new Date('2024-11-03T10:00:00Z'), tz, '04:00'), '2024-11-02');
  t.equal(completeThrough(new Date('2024-11-03T10:00:00Z'), 'UTC', '00:00'), '2024-11-02');
});

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

t.test('dates', async (t) => {
  t.equal(isoDate('20250704'), '2025-07-04');
  t.equal(gtfsDate('2025-07-04'), '20250704');
  t.equal(addDays('2024-02-28', 1), '2024-02-29');
  t.equal(addDays('2025-01-01', -1), '2024-12-31');
  t.equal(weekday('2025-07-04'), 5, 'a Friday');
  t.same(dateRange('2025-12-30', '20260102'), ['2025-12-30', '2025-12-31', '2026-01-01', '2026-01-02']);
  t.throws(() => isoDate('2025-02-30'), /no such date/);
  t.throws(() => isoDate('yesterday'), /not a date/);
});

t.test('GTFS times', async (t) => {
  t.equal(formatGtfsTime(0), '00:00:00');
  t.equal(formatGtfsTime(25 * 3600 + 61), '25:01:01');
  t.equal(parseGtfsTime('25:01:01'), 25 * 3600 + 61);
  t.equal(parseGtfsTime(' 5:00:00'), 5 * 3600);
  t.equal(parseGtfsTime(''), null);
  t.equal(parseGtfsTime('10:75:00'), null);
});

t.test('epoch days, as DuckDB stores DATE', async (t) => {
  t.equal(epochDay('1970-01-01'), 0);
  t.equal(epochDay('19700102'), 1);
  t.equal(epochDay('2023-02-29'), null);
  t.equal(weekdayOfEpochDay(0), 4, 'a Thursday');
  t.equal(weekdayOfEpochDay(-1), 3);
});

t.test('ISO weeks are labeled as DuckDB labels them, across year boundaries', async (t) => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  const reader =
    await conn.runAndReadAll(`SELECT strftime(d, '%Y-%m-%d') AS d, strftime(d, '%G-W%V') AS w, isodow(d) AS dow
    FROM range(DATE '2019-12-20', DATE '2027-01-12', INTERVAL 1 DAY) AS t(d)`);
  const wrong = reader.getRowObjectsJS().filter((r) => {
    const day = epochDay(r.d as string)!;
    return isoWeekLabelOfEpochDay(day) !== r.w || isoWeekdayOfEpochDay(day) !== Number(r.dow);
  });
  t.same(wrong, [], 'every day of seven years');
  const days = reader.getRowObjectsJS().map((r) => r.d as string);
  t.same(
    days.filter((d) => dateOfEpochDay(epochDay(d)!) !== d),
    [],
    'dates from day numbers',
  );
  for (const d of ['1000-01-01', '1600-02-29', '1969-12-31', '1970-01-01', '2000-02-29', '2100-03-01', '9999-12-31']) {
    t.equal(dateOfEpochDay(epochDay(d)!), d);
  }
  t.equal(isoWeekLabelOfEpochDay(epochDay('2024-12-30')!), '2025-W01');
  t.equal(isoWeekLabelOfEpochDay(epochDay('2021-01-03')!), '2020-W53');
  conn.closeSync();
});

t.test('iso writes what Date#toISOString writes, for every kind of instant', async (t) => {
  const samples = [
    0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 1_700_000_000_000, 1_700_000_000_007,
    1_700_000_000_070, 4_102_444_800_000 /* 2100-01-01 */, 253_402_300_799_999, 253_402_300_800_000, -1, -86_400_001,
    1_700_000_000_000.5, 8.64e15, -8.64e15,
  ];
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 20_000; i++) samples.push(Math.floor(random() * 4_102_444_800_000));
  let differing = 0;
  for (const ms of samples) if (iso(ms) !== new Date(ms).toISOString()) differing++;
  t.equal(differing, 0, `${samples.length} instants, none differ`);
  // a second pass reads the cached day prefixes
  t.equal(samples.filter((ms) => iso(ms) !== new Date(ms).toISOString()).length, 0);
});

t.test('iso: null for what a Date cannot hold', async (t) => {
  t.same([iso(null), iso(undefined), iso(Number.NaN), iso(Infinity), iso(8.64e15 + 1)], [null, null, null, null, null]);
  t.equal(isoOr(Number.NaN, 0), '1970-01-01T00:00:00.000Z');
});

t.test('iso takes DuckDB BIGINTs; isoRequired refuses what is not an instant', async (t) => {
  t.equal(iso(1_700_000_000_123n), '2023-11-14T22:13:20.123Z');
  t.equal(isoRequired(0), '1970-01-01T00:00:00.000Z');
  t.throws(() => isoRequired(Number.NaN), RangeError);
});

t.test('utcDate and instantText', async (t) => {
  t.equal(utcDate(Date.UTC(2024, 1, 29, 23, 59, 59, 999)), '2024-02-29');
  t.equal(utcDate(-1), '1969-12-31');
  t.equal(instantText(Date.UTC(2024, 1, 29, 12)), '2024-02-29T12:00:00Z', 'no zero milliseconds');
  t.equal(instantText(Date.UTC(2024, 1, 29, 12) + 5), '2024-02-29T12:00:00.005Z');
  t.equal(instantText(1.7e18), '1700000000000000000 ms', 'what no Date holds is shown as it came');
});
