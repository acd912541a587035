import t from 'tap';
import { fakeSchedule } from '../../test/support/pipeline-fakes.ts';
import { IdTable } from './id-table.ts';
import { scheduleLookups } from './schedule-lookups.ts';

// strings made at run time, as the decoder makes them: not the literals' internalized copies
const fresh = (text: string) => Buffer.from(text).toString();

t.test('IdTable: each key once, its value by index, past the size it was cleared for', async (t) => {
  const table = new IdTable<number>();
  table.clear(4);
  const keys = Array.from({ length: 5_000 }, (_, i) => `bus-${i}`);
  t.equal(keys.filter((key, i) => !table.add(key, i)).length, 0, 'every key added');
  t.equal(table.size, 5_000, 'grown well past 4');
  t.equal(
    keys.filter((key, i) => table.valueAt(table.indexOf(fresh(key))) !== i).length,
    0,
    'every key found by content',
  );
  t.notOk(table.add(fresh('bus-17'), -1), 'a key already in it is not added again');
  t.equal(table.valueAt(table.indexOf('bus-17')), 17, '…and keeps its value');
  t.equal(table.indexOf('bus-5000'), -1);
  t.equal(table.indexOf(''), -1);
  t.ok(table.add('', 0), 'the empty string is a key like any other');
  t.equal(table.indexOf(fresh('')), 5_000);
});

t.test('IdTable: cleared, it forgets every key, for a smaller size too', async (t) => {
  const table = new IdTable<null>();
  table.clear(1_000);
  for (let i = 0; i < 1_000; i++) table.add(`v${i}`, null);
  table.clear(3);
  t.equal(table.size, 0);
  t.equal(table.indexOf('v1'), -1);
  t.ok(table.add('v1', null));
  t.notOk(table.add(fresh('v1'), null));
  for (let i = 0; i < 100; i++) table.add(`w${i}`, null);
  t.equal(table.size, 101, 'grows again from the small size');
  t.equal(table.indexOf('w99'), 100);
});

t.test('IdTable: keys beyond one byte a character, and keys that differ only in order', async (t) => {
  const table = new IdTable<string>();
  for (const key of ['Zürich HB', 'Zurich HB', '東京', 'ab', 'ba', 'a\u0000b', 'ab\u0000', '😀']) {
    t.ok(table.add(key, key), key);
  }
  for (const key of ['Zürich HB', '東京', 'ba', 'a\u0000b', '😀'])
    t.equal(table.valueAt(table.indexOf(fresh(key))), key);
  t.equal(table.indexOf('Zurich  HB'), -1);
});

t.test('scheduleLookups: the schedule answers each id once, for each schedule its own', async (t) => {
  const schedule = fakeSchedule({
    routes: [{ route_id: 'r1', route_type: 3 }],
    stops: [{ stop_id: 's1' }],
    trips: [{ trip_id: 't1', route_id: 'r1' }],
  });
  const asked: string[] = [];
  const ask =
    <T>(what: string, answer: (id: string) => T) =>
    (id: string) => {
      asked.push(`${what} ${id}`);
      return answer(id);
    };
  const counted = {
    ...schedule,
    trip: ask('trip', schedule.trip),
    stop: ask('stop', schedule.stop),
    route: ask('route', schedule.route),
  };
  const lookups = scheduleLookups(counted);
  t.equal(scheduleLookups(counted), lookups, 'one per schedule');
  for (let i = 0; i < 3; i++) {
    t.equal(lookups.trip(fresh('t1')), schedule.trip('t1'));
    t.equal(lookups.trip(fresh('t2')), undefined, 'an unknown id is remembered as unknown');
    t.equal(lookups.stop(fresh('s1')), schedule.stop('s1'));
    t.equal(lookups.route(fresh('r1')), schedule.route('r1'));
    t.equal(lookups.tripShape('t1'), undefined, 'no shapes');
  }
  t.same(asked, ['trip t1', 'trip t2', 'stop s1', 'route r1']);
  t.not(scheduleLookups({ ...counted }), lookups, 'another schedule (a new import) asks afresh');
  const shape = { lat: Float32Array.of(37), lon: Float32Array.of(-122) };
  const withShapes = scheduleLookups({
    ...counted,
    tripShape: ask('shape', (id) => (id === 't1' ? shape : undefined)),
  });
  t.equal(withShapes.tripShape(fresh('t1')), shape);
  t.equal(withShapes.tripShape(fresh('t1')), shape);
  t.equal(withShapes.tripShape('t2'), undefined);
  t.same(asked.slice(-2), ['shape t1', 'shape t2']);

  // a feed naming ever new ids (or weeks of them): the remembered answers start afresh past a bound
  asked.length = 0;
  for (let i = 0; i < 70_000; i++) lookups.trip(`made-up-${i}`);
  lookups.trip('t1');
  t.same(asked.at(-1), 'trip t1', 'asked again once the table started afresh');
  t.equal(lookups.trip('made-up-69999'), undefined);
  t.equal(asked.length, 70_001, 'the ids since are still remembered');
});
