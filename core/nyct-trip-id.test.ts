import t from 'tap';
import { NYCT_DAY, nyctKey, nyctOriginOfSeconds, parseNyctTripId } from './nyct-trip-id.ts';
import { nyctStaticKey } from '../test/support/pipeline-fakes.ts';

t.test('realtime ids: origin in hundredths of a minute, route, direction, path', async (t) => {
  t.same(parseNyctTripId('036050_2..S07R'), { origin: 36050, route: '2', direction: 'S', path: '07R' });
  t.same(parseNyctTripId('083200_A..N'), { origin: 83200, route: 'A', direction: 'N', path: null }, 'no path');
  t.same(parseNyctTripId('131150_GS.N01R'), { origin: 131150, route: 'GS', direction: 'N', path: '01R' });
  t.same(
    parseNyctTripId('B20240506WKD_036050_2..S07R'),
    { origin: 36050, route: '2', direction: 'S', path: '07R' },
    'a prefix',
  );
});

t.test('static ids embed the same pieces at their end; columns may leave the origin out', async (t) => {
  t.same(parseNyctTripId('AFA23GEN-1037-Sunday-00_000600_1..S03R'), {
    origin: 600,
    route: '1',
    direction: 'S',
    path: '03R',
  });
  t.same(parseNyctTripId('2..S07R'), { origin: null, route: '2', direction: 'S', path: '07R' });
});

t.test('ids of other agencies are not NYCT ids', async (t) => {
  for (const id of ['501', 'T1', '1234567_weekday', 'CT:2023-11-07:501', '036050_2..X07R', ''])
    t.equal(parseNyctTripId(id), null, id);
});

t.test('static keys: from the id, else the mta_trip_id column and the first departure', async (t) => {
  t.equal(nyctOriginOfSeconds(6 * 3600 + 30), 36050, '06:00:30');
  t.equal(nyctOriginOfSeconds(24 * 3600 + 600), 145000, '24:10:00 stays past the day');
  t.equal(NYCT_DAY, 144000);
  t.same(nyctStaticKey('AFA24GEN-2043-Weekday-00_036050_2..S07R', null, '2', null), {
    key: nyctKey(36050, '2', 'S'),
    path: '07R',
  });
  t.same(nyctStaticKey('2-0600-a', '2..S07R', '2', 21630), { key: '36050|2|S', path: '07R' });
  t.same(
    nyctStaticKey('2-0600-a', '036000_2..S07R', '2', 21630),
    { key: '36000|2|S', path: '07R' },
    'an origin in the column wins',
  );
  t.same(nyctStaticKey('X-1', 'W..N', 'W', 3600), { key: '6000|W|N', path: null });
  t.equal(nyctStaticKey('2-0600-a', '2..S07R', '2', null), null, 'no origin anywhere');
  t.equal(nyctStaticKey('501', null, 'L1', 3600), null, 'not an NYCT trip');
  // the trip's route, not the id's: W trains' static ids carry N in the route position
  t.same(nyctStaticKey('B20240506SAT_040000_N..N', null, 'W', null), { key: '40000|W|N', path: null });
});
