import t from 'tap';
import { diffItems, indexItems, type TopicItem } from './item-diff.ts';

t.test('add, update and remove by type + id and content', async (t) => {
  const before = indexItems([
    { id: 1, type: 'vehicle', lat: 1 },
    { id: '1', type: 'alert', text: 'a' },
    { id: 'x', type: 'vehicle', lat: 5 },
  ]);
  const { next, changes } = diffItems(before, [
    { id: 1, type: 'vehicle', lat: 2 },
    { id: '1', type: 'alert', text: 'a' },
    { id: 'y', type: 'vehicle', lat: 7 },
  ]);
  t.same(
    changes.map((c) => [c.kind, JSON.parse(c.data)]),
    [
      ['remove', { id: 'x', type: 'vehicle' }],
      ['update', { id: 1, type: 'vehicle', lat: 2 }],
      ['add', { id: 'y', type: 'vehicle', lat: 7 }],
    ],
    'the same id under another type is another item; removes come first',
  );
  t.equal(next.size, 3);
  t.equal(before.size, 3, 'the previous index is left as it was');
  const numeric = diffItems(next, []).changes;
  t.same(
    numeric.map((c) => JSON.parse(c.data)).find((d) => d.type === 'vehicle' && d.id === 1),
    { id: 1, type: 'vehicle' },
    'a removed numeric id stays a number',
  );
  t.same(
    diffItems(next, [
      { id: 1, type: 'vehicle', lat: 2 },
      { id: '1', type: 'alert', text: 'a' },
      { id: 'y', type: 'vehicle', lat: 7 },
    ]).changes,
    [],
    'an identical result is no change',
  );
});

t.test('duplicates and malformed items', async (t) => {
  const { next, changes } = diffItems(new Map(), [
    { id: 'a', type: 'v', n: 1 },
    { id: 'a', type: 'v', n: 2 },
  ]);
  t.equal(changes.length, 1, 'a duplicate within one result is reported once');
  t.same(JSON.parse(changes[0]!.data), { id: 'a', type: 'v', n: 1 }, 'the first one is the item');
  t.same(
    indexItems([
      { id: 'a', type: 'v', n: 1 },
      { id: 'a', type: 'v', n: 2 },
    ]),
    next,
    'index and diff agree on duplicates',
  );
  t.throws(() => indexItems([{ id: null, type: 'v' } as unknown as TopicItem]), TypeError);
  t.throws(() => diffItems(new Map(), [{ id: 'a' } as unknown as TopicItem]), TypeError);
});

t.test('a change in age-only fields is no update; a real change carries their current values', async (t) => {
  const before = indexItems([
    { id: 'a', type: 'arrival', predicted_at: 'p1', observed_at: 't1' },
    { id: 'v', type: 'vehicle', lat: 1, age_s: 3 },
  ]);
  const same = diffItems(before, [
    { id: 'a', type: 'arrival', predicted_at: 'p1', observed_at: 't2' },
    { id: 'v', type: 'vehicle', lat: 1, age_s: 13 },
  ]);
  t.same(same.changes, [], 'only observed_at and age_s moved: nothing is sent');
  const moved = diffItems(same.next, [
    { id: 'a', type: 'arrival', predicted_at: 'p2', observed_at: 't3' },
    { id: 'v', type: 'vehicle', lat: 1, age_s: 23 },
  ]);
  t.same(
    moved.changes.map((c) => [c.kind, JSON.parse(c.data)]),
    [['update', { id: 'a', type: 'arrival', predicted_at: 'p2', observed_at: 't3' }]],
  );
});
