import t from 'tap';
import { CLEAR_AFTER, foldFindings, ruleChangeData } from './health.ts';

t.test('a rule starts on its first finding and stops after clean bodies in a row', async (t) => {
  let state = foldFindings(undefined, { E022: { count: 3, example: 'tu-1' } }, 1_000);
  t.same(
    state.changes.map((c) => [c.rule.rule, c.firing, c.since_ms]),
    [['E022', true, 1_000]],
  );
  t.match(state.rules, [{ rule: 'E022', total: 3, last: 3, example: 'tu-1', firing_since_ms: 1_000, clean: 0 }]);
  const first = state.rules;
  state = foldFindings(state.rules, { E022: { count: 2, example: 'tu-9' } }, 2_000);
  t.same(state.changes, [], 'still firing: nothing announced');
  t.match(state.rules, [{ total: 5, last: 2, example: 'tu-9', last_seen_ms: 2_000, firing_since_ms: 1_000 }]);
  t.match(first, [{ total: 3 }], 'the list given is left as it was');
  // one clean body between two bad ones announces nothing
  state = foldFindings(state.rules, {}, 3_000);
  t.same(state.changes, []);
  t.match(state.rules, [{ last: 0, clean: 1, firing_since_ms: 1_000 }]);
  state = foldFindings(state.rules, { E022: { count: 1, example: 'tu-2' } }, 4_000);
  t.same(state.changes, []);
  for (let i = 1; i < CLEAR_AFTER; i++) {
    state = foldFindings(state.rules, {}, 4_000 + i * 1_000);
    t.same(state.changes, [], `${i} clean`);
  }
  state = foldFindings(state.rules, {}, 9_000);
  t.same(
    state.changes.map((c) => [c.rule.rule, c.firing, c.since_ms]),
    [['E022', false, 1_000]],
    `${CLEAR_AFTER} clean in a row: stopped, since when it started`,
  );
  t.match(state.rules, [{ total: 6, last: 0, firing_since_ms: null, last_seen_ms: 4_000 }]);
  state = foldFindings(state.rules, { E022: { count: 1, example: 'x' }, W009: { count: 4, example: null } }, 10_000);
  t.same(
    state.changes.map((c) => [c.rule.rule, c.firing]),
    [
      ['E022', true],
      ['W009', true],
    ],
    'a rule that stopped starts again',
  );
});

t.test('the event data names the rule, what it means and an entity', async (t) => {
  const [change] = foldFindings(
    undefined,
    { E018: { count: 1, example: null } },
    Date.parse('2024-05-01T12:00:00Z'),
  ).changes;
  t.same(ruleChangeData('metro-vp', change!), {
    source: 'metro-vp',
    rule: 'E018',
    severity: 'error',
    title: 'GTFS-rt header timestamp decreased between two sequential iterations',
    unusable: true,
    firing: true,
    findings: 1,
    example_entity_id: null,
    since: '2024-05-01T12:00:00.000Z',
    last_seen_at: '2024-05-01T12:00:00.000Z',
  });
});
