import t from 'tap';
import { addDays, completeThrough, daysBetween, isServiceDate, isTimeZone, parseClock, wallClock } from './dates.ts';

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
  t.same(wallClock(new Date('2024-03-10T08:30:00Z'), tz), { date: '2024-03-10', minutes: 3 * 60 + 30 }, '03:30 CDT, after the jump');
  // spring forward: 2024-03-10 has 23 hours; day 03-09 ends at 04:00 CDT on 03-10 (09:00Z)
  t.equal(completeThrough(new Date('2024-03-10T08:59:00Z'), tz, '04:00'), '2024-03-08');
  t.equal(completeThrough(new Date('2024-03-10T09:00:00Z'), tz, '04:00'), '2024-03-09');
  // fall back: 2024-11-03 has 25 hours; day 11-02 ends at 04:00 CST on 11-03 (10:00Z)
  t.equal(completeThrough(new Date('2024-11-03T09:59:00Z'), tz, '04:00'), '2024-11-01');
  t.equal(completeThrough(new Date('2024-11-03T10:00:00Z'), tz, '04:00'), '2024-11-02');
  t.equal(completeThrough(new Date('2024-11-03T10:00:00Z'), 'UTC', '00:00'), '2024-11-02');
});
