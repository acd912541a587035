import t from 'tap';
import { Db } from '../store/db.ts';
import { dateRange, localInstant, serviceDayWindow, zoneOffsetMs } from './dates.ts';

t.test('service day windows run from service_day_end to service_day_end, DST days included', async (t) => {
  t.same(
    serviceDayWindow('2024-03-10', 'America/New_York', '04:00'),
    {
      date: '2024-03-10',
      timezone: 'America/New_York',
      start: new Date('2024-03-10T08:00:00Z'),
      end: new Date('2024-03-11T08:00:00Z'),
    },
    'spring forward: 04:00 EDT to 04:00 EDT',
  );
  const autumn = serviceDayWindow('2024-11-03', 'America/New_York', '04:00');
  t.equal(autumn.end.getTime() - autumn.start.getTime(), 24 * 3_600_000);
  t.same(autumn.start, new Date('2024-11-03T09:00:00Z'), '04:00 EST, after the fall back');
  const longDay = serviceDayWindow('2024-11-02', 'America/New_York', '04:00');
  t.equal(longDay.end.getTime() - longDay.start.getTime(), 25 * 3_600_000, 'the day holding the repeated hour is 25 h');
  t.same(serviceDayWindow('2024-05-01', 'UTC', '00:00'), {
    date: '2024-05-01',
    timezone: 'UTC',
    start: new Date('2024-05-01T00:00:00Z'),
    end: new Date('2024-05-02T00:00:00Z'),
  });
  t.same(serviceDayWindow('2024-12-31', 'Asia/Kolkata', '03:30').start, new Date('2024-12-30T22:00:00Z'));
  t.throws(() => serviceDayWindow('2024-02-30', 'UTC', '04:00'), /not a date/);
  t.throws(() => serviceDayWindow('2024-02-01', 'Mars/Olympus', '04:00'), /unknown time zone/);
  t.throws(() => serviceDayWindow('2024-02-01', 'UTC', '4am'), RangeError);
});

t.test('ambiguous and skipped wall times resolve as Temporal "compatible" does', async (t) => {
  // New York: 2024-03-10 02:30 does not exist; 2024-11-03 01:30 happens twice
  t.same(
    localInstant('2024-03-10', 150, 'America/New_York'),
    new Date('2024-03-10T07:30:00Z'),
    'gap: read as 03:30 EDT',
  );
  t.same(
    localInstant('2024-11-03', 90, 'America/New_York'),
    new Date('2024-11-03T05:30:00Z'),
    'overlap: the first 01:30 (EDT)',
  );
  // east of Greenwich the order of offsets is reversed
  t.same(
    localInstant('2024-10-27', 150, 'Europe/Berlin'),
    new Date('2024-10-27T00:30:00Z'),
    'overlap: the first 02:30 (CEST)',
  );
  t.same(localInstant('2024-03-31', 150, 'Europe/Berlin'), new Date('2024-03-31T01:30:00Z'), 'gap: read as 03:30 CEST');
  t.equal(zoneOffsetMs(Date.parse('2024-07-01T00:00:00Z'), 'Asia/Kathmandu'), (5 * 60 + 45) * 60_000);
});

t.test('windows agree with DuckDB ICU time zone conversion', async (t) => {
  const db = await Db.open(':memory:', { migrate: false });
  t.teardown(() => db.close());
  const zones = [
    'America/New_York',
    'Europe/Berlin',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'America/Sao_Paulo',
    'UTC',
  ];
  const dates = [
    '2024-01-15',
    '2024-03-10',
    '2024-03-31',
    '2024-04-07',
    '2024-09-29',
    '2024-10-06',
    '2024-10-27',
    '2024-11-03',
  ];
  let compared = 0;
  for (const zone of zones) {
    for (const date of dates) {
      const [row] = await db.all<{ ms: bigint }>(
        `SELECT epoch_ms(timezone($zone, (DATE '${date}' + INTERVAL '04:00')::TIMESTAMP)) AS ms`,
        { zone },
      );
      t.equal(serviceDayWindow(date, zone, '04:00').start.getTime(), Number(row!.ms), `${zone} ${date}`);
      compared++;
    }
  }
  t.equal(compared, zones.length * dates.length);
});

t.test('dateRange lists both ends', async (t) => {
  t.same(dateRange('2024-02-28', '2024-03-01'), ['2024-02-28', '2024-02-29', '2024-03-01']);
  t.same(dateRange('2024-03-01', '2024-03-01'), ['2024-03-01']);
  t.same(dateRange('2024-03-02', '2024-03-01'), []);
});
