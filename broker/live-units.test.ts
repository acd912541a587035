import t from 'tap';
import { makeAlert, makeArrival, makeFeed, makeVehicle } from '../test/support/fake-live.ts';
import { sliceOfKey, UnitMemory, unitsOf, type UnitChanges } from './live-units.ts';

const fresh = (): UnitChanges => ({ set: [], del: [] });

t.test("a trip's arrivals are one unit, a vehicle or an alert one each, the feeds one for all", async (t) => {
  const rows = [
    makeArrival({ trip_id: 'T1', station_id: 'A', stop_sequence: 1 }),
    makeArrival({ trip_id: 'T1', station_id: 'B', stop_sequence: 2 }),
    makeArrival({ trip_id: 'T2', station_id: 'A', stop_sequence: 1 }),
    // the same trip again later in the feed: the same unit, rows in the order given
    makeArrival({ trip_id: 'T1', station_id: 'C', stop_sequence: 3 }),
  ];
  const units = unitsOf('arrivals', rows);
  t.equal(units.size, 2);
  const t1 = [...units.values()][0] as Array<{ stop_id: string }>;
  t.same(
    t1.map((a) => a.stop_id),
    ['A', 'B', 'C'],
  );
  const vehicles = unitsOf('vehicles:bus', [
    makeVehicle({ vehicle_id: 'v1' }),
    makeVehicle({ vehicle_id: 'v2' }),
    makeVehicle({ vehicle_id: 'v1', lat: 1 }),
  ]);
  t.equal(vehicles.size, 2, 'a vehicle id repeated in a feed stays one unit, both rows kept');
  t.equal([...vehicles.values()][0]!.length, 2);
  t.equal(unitsOf('alerts', [makeAlert({ id: 'a1' }), makeAlert({ id: 'a2' })]).size, 2);
  const feeds = unitsOf('feeds', [makeFeed({ feed_id: 'f2' }), makeFeed({ feed_id: 'f1' })]);
  t.same([...feeds.keys()], ['feeds']);
  t.same(
    (feeds.get('feeds') as Array<{ feed_id: string }>).map((f) => f.feed_id),
    ['f2', 'f1'],
    'in their order',
  );
  for (const key of [...units.keys(), ...vehicles.keys(), 'feeds'])
    t.ok(sliceOfKey(key), `slice of ${JSON.stringify(key)}`);
  t.equal(sliceOfKey('nonsense\u001fx'), null);
});

t.test('only the units whose rows changed are sent; the ones gone are deleted', async (t) => {
  const memory = new UnitMemory();
  const v1 = makeVehicle({ vehicle_id: 'v1' });
  const v2 = makeVehicle({ vehicle_id: 'v2' });
  let changes = fresh();
  memory.diff('vehicles:bus', [v1, v2], changes);
  t.equal(changes.set.length, 2, 'everything at first');
  t.same(changes.del, []);
  changes = fresh();
  memory.diff('vehicles:bus', [v1, { ...v2 }], changes);
  t.same(changes, fresh(), 'an equal row (a new object) is no change');
  changes = fresh();
  const moved = { ...v2, lat: 42.4 };
  const v3 = makeVehicle({ vehicle_id: 'v3' });
  memory.diff('vehicles:bus', [moved, v3], changes);
  t.same(
    changes.set.map(([key, text]) => [key.split('\u001f').at(-1), JSON.parse(text)]),
    [
      ['v2', [moved]],
      ['v3', [v3]],
    ],
  );
  t.same(
    changes.del.map((key) => key.split('\u001f').at(-1)),
    ['v1'],
  );
  t.equal(memory.all().length, 2, 'what the broker holds now');
  memory.clear();
  changes = fresh();
  memory.diff('vehicles:bus', [moved, v3], changes);
  t.equal(changes.set.length, 2, 'after clear, everything again');
});
