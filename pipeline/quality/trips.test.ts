import t from 'tap';
import { validStartDate, validStartTime } from './trips.ts';

t.test('validStartTime reads as /^[0-2]?[0-9]:[0-5][0-9]:[0-5][0-9]$/ (the validator’s GTFS time)', async (t) => {
  const pattern = /^[0-2]?[0-9]:[0-5][0-9]:[0-5][0-9]$/;
  const cases = [
    ...['00:00:00', '05:00:00', '9:05:07', '29:59:59', '2:59:59', '24:00:00'],
    ...['30:00:00', '5:00', '1:2:3', '12:60:00', '12:00:60', '123:00:00', '012:00:00', '', 'ab:cd:ef'],
    ...['24:00:0', ' 1:00:00', '1:00:00 ', '٣:00:00', '12-00-00', '12:00:00\n', '1:00:000', '/0:00:00'],
  ];
  // and every string of the right lengths over the characters that matter at each place
  const alphabet = ['/', '0', '2', '3', '5', '6', '9', ':', ';'];
  for (const a of alphabet) for (const b of alphabet) for (const c of alphabet) cases.push(`${a}${b}:${c}9:5${c}`);
  for (const a of alphabet) for (const b of alphabet) cases.push(`${a}:${b}0${a}00`, `1${a}:${b}0:00`);
  const wrong = cases.filter((text) => validStartTime(text) !== pattern.test(text));
  t.same(wrong, [], `${cases.length} strings`);
});

t.test('validStartDate: a real YYYYMMDD day, February 29th in leap years only', async (t) => {
  for (const ok of ['20240229', '20000229', '20241231', '19990101']) t.ok(validStartDate(ok), ok);
  for (const no of ['20230229', '19000229', '20241301', '20240001', '20240431', '2024-01-01', '2024010', 'x']) {
    t.notOk(validStartDate(no), no);
  }
  t.ok(validStartDate('20240501'));
  t.ok(validStartDate('20240501'), 'the last date remembered answers the same');
});
