import t from 'tap';
import { formatIdChanges, idChanges } from './served-id-changes.ts';
import { NO_SCHEDULE, ServedIds, type IdCatalog } from './served-ids.ts';

/** Whether a stored row of `schedules` matches a resolved id's schedules (null: any), as the store's SQL asks. */
const inSchedules = (schedules: readonly string[] | null, scheduleId: string | null): boolean =>
  schedules === null || schedules.includes(scheduleId ?? NO_SCHEDULE);

/** A catalog from per-schedule id lists: { a: { route: ['1', '5'] }, b: { route: ['1'] } }. */
function catalog(
  lists: Record<string, Partial<Record<'route' | 'stop' | 'trip', string[]>>>,
  prefixes: Record<string, string> = {},
): IdCatalog {
  const owners = {
    route: new Map<string, string[]>(),
    stop: new Map<string, string[]>(),
    trip: new Map<string, string[]>(),
  };
  for (const [schedule, kinds] of Object.entries(lists))
    for (const [kind, ids] of Object.entries(kinds) as ['route' | 'stop' | 'trip', string[]][])
      for (const id of ids) owners[kind].set(id, [...(owners[kind].get(id) ?? []), schedule].sort());
  return {
    prefixes: new Map(Object.keys(lists).map((s) => [s, prefixes[s] ?? s])),
    owners,
    fingerprint: JSON.stringify([lists, prefixes]),
  };
}

const feeds = new Map<string, string | null>([
  ['hart-vp', 'hart'],
  ['psta-vp', 'psta'],
  ['loose', null],
]);

t.test('one schedule, or none: every id as stored, both ways', async (t) => {
  for (const ids of [ServedIds.NONE, ServedIds.build(catalog({ hart: { route: ['1'], trip: ['t'] } }), feeds)]) {
    t.equal(ids.scoped, false);
    t.equal(ids.serve('hart', 'route', '1'), '1');
    t.equal(ids.serve('hart', 'vehicle', 'v1'), 'v1');
    t.same(ids.resolve('route', '1'), { id: '1', schedules: null });
    t.equal(inSchedules(ids.resolve('route', '1').schedules, 'anything'), true);
  }
});

t.test('shared ids are prefixed for each schedule listing them; the rest stay', async (t) => {
  const ids = ServedIds.build(
    catalog(
      {
        hart: { route: ['1', '5', 'L'], stop: ['S1', 'H'], trip: ['T1'] },
        psta: { route: ['1', '7', 'L'], stop: ['S1'] },
      },
      { psta: 'pinellas' },
    ),
    feeds,
  );
  t.equal(ids.scoped, true);
  t.same([...ids.colliding].sort(), ['hart', 'psta']);
  t.equal(ids.serve('hart', 'route', '1'), 'hart:1');
  t.equal(ids.serve('psta', 'route', '1'), 'pinellas:1', 'id_prefix names the prefix');
  t.equal(ids.serve('hart', 'route', '5'), '5', 'listed by one schedule: as stored');
  t.equal(ids.serve('psta', 'route', '7'), '7');
  t.equal(ids.serve('hart', 'stop', 'H'), 'H');
  t.equal(ids.serve('psta', 'stop', 'S1'), 'pinellas:S1');
  // what no schedule lists, of schedules that share ids: prefixed
  t.equal(ids.serve('hart', 'vehicle', '1001'), 'hart:1001');
  t.equal(ids.serve('hart', 'trip', 'ADDED-9'), 'hart:ADDED-9');
  // a schedule's own id that another schedule lists alone would be read as the other's
  t.equal(ids.serve('psta', 'route', '5'), 'pinellas:5');
  t.equal(ids.serve(null, 'route', '1'), '1', 'a feed without a schedule keeps its ids');
  t.equal(ids.scopeOf({ feed_id: 'psta-vp' }), 'psta');
  t.equal(ids.scopeOf({ feed_id: 'psta-vp', schedule_id: 'hart' }), 'hart', 'the row says first');
  t.equal(ids.scopeOf({ feed_id: 'psta-vp', schedule_id: null }), null);
  t.equal(ids.scopeOf({ feed_id: 'unknown' }), null);

  t.same(ids.resolve('route', 'hart:1'), { id: '1', schedules: ['hart'] });
  t.same(ids.resolve('route', 'pinellas:1'), { id: '1', schedules: ['psta'] });
  t.same(ids.resolve('route', '5'), { id: '5', schedules: ['hart', NO_SCHEDULE] });
  t.same(ids.resolve('route', '1'), { id: '1', schedules: [NO_SCHEDULE] }, 'bare: rows without a schedule only');
  t.same(ids.resolve('vehicle', 'hart:1001'), { id: '1001', schedules: ['hart'] });
  t.same(ids.resolve('route', 'psta:1'), { id: 'psta:1', schedules: [NO_SCHEDULE] }, 'the id, not the prefix, counts');
  t.same(
    ids.resolve('route', 'hart:5'),
    { id: 'hart:5', schedules: [NO_SCHEDULE] },
    "5 is served bare: hart:5 is no one's",
  );
  // every served id reads back to its schedule and id
  for (const [s, kind, id] of [
    ['hart', 'route', '1'],
    ['psta', 'stop', 'S1'],
    ['hart', 'trip', 'T1'],
    ['psta', 'vehicle', 'bus 7'],
    ['hart', 'route', '5'],
  ] as const) {
    const back = ids.resolve(kind, ids.serve(s, kind, id));
    t.equal(back.id, id);
    t.ok(inSchedules(back.schedules, s), `${s} ${kind} ${id}`);
  }
});

t.test('an id that reads as another schedule prefixed is prefixed itself: served ids stay one-to-one', async (t) => {
  const ids = ServedIds.build(catalog({ a: { route: ['1'] }, b: { route: ['1', 'a:1'] } }), feeds);
  t.equal(ids.serve('a', 'route', '1'), 'a:1');
  t.equal(ids.serve('b', 'route', 'a:1'), 'b:a:1');
  t.same(ids.resolve('route', 'a:1'), { id: '1', schedules: ['a'] });
  t.same(ids.resolve('route', 'b:a:1'), { id: 'a:1', schedules: ['b'] });
  // schedules that share nothing keep ids no schedule lists, unless they read as prefixed
  const quiet = ServedIds.build(catalog({ a: { route: ['1'] }, c: { route: ['2'] } }), feeds);
  t.equal(quiet.scoped, true);
  t.equal(quiet.serve('c', 'vehicle', 'v9'), 'v9');
  t.equal(quiet.serve('c', 'vehicle', 'a:9'), 'c:a:9');
  t.same(quiet.resolve('vehicle', 'v9'), { id: 'v9', schedules: ['a', 'c', NO_SCHEDULE] });
});

t.test('what an added schedule changes, in words', async (t) => {
  const before = ServedIds.build(catalog({ hart: { route: ['1', '5'], stop: ['S1'] } }), feeds);
  const after = ServedIds.build(
    catalog({ hart: { route: ['1', '5'], stop: ['S1'] }, psta: { route: ['1'], stop: ['S1', 'S2'] } }),
    feeds,
  );
  const changes = idChanges(before, after);
  t.same(
    changes.map((c) => [c.schedule_id, c.kind, c.count, c.shared_with]),
    [
      ['hart', 'route', 1, ['psta']],
      ['hart', 'stop', 1, ['psta']],
      ['hart', 'unlisted', 1, []],
    ],
    'the new schedule had no ids served before: only what changes for the one served',
  );
  t.same(formatIdChanges(changes).slice(0, 3), [
    'schedule hart: 1 route id now served otherwise (also listed by psta): 1 → hart:1',
    'schedule hart: 1 stop id now served otherwise (also listed by psta): S1 → hart:S1',
    'schedule hart: ids no schedule lists (vehicles, added trips) are now served as hart:<id> (were <id>)',
  ]);
  t.same(idChanges(after, after), [], 'nothing changed, nothing said');
  t.same(idChanges(ServedIds.NONE, before), [], 'one schedule: as stored');
  t.same(
    idChanges(ServedIds.NONE, after).map((c) => c.schedule_id),
    ['hart', 'hart', 'hart', 'psta', 'psta', 'psta'],
    'at start, every schedule served otherwise than stored',
  );
  const back = idChanges(after, before);
  t.same(
    back.map((c) => [c.schedule_id, c.kind]),
    [
      ['hart', 'route'],
      ['hart', 'stop'],
      ['hart', 'unlisted'],
    ],
    'a schedule removed: the remaining one is served as stored again',
  );
  t.equal(back[0]!.examples[0]!.after, '1');
});
