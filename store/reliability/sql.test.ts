import t from 'tap';
import { bind, statement, statementWithout, statements } from './sql.ts';

t.test('sql files are read once, includes inlined, parameters listed', async (t) => {
  const rollup = statementWithout('rollup', ['rollup_select_days']);
  t.notMatch(rollup.text, /\{\{/, 'no include left');
  t.notMatch(rollup.text, /--/, 'comments stripped');
  t.same([...rollup.params].sort(), [
    'complete_through',
    'final',
    'first',
    'from',
    'group',
    'live_from',
    'mode',
    'open_from',
    'open_to',
    'route_id',
    'schedules',
    'split',
    'to',
  ]);
  const outcomes = statement('finalize_outcomes');
  t.match(outcomes.text, /FROM trip_observations/, 'trip_outcomes.sql is inlined');
  t.same([...outcomes.params].sort(), ['complete_through', 'outcomes_from', 'outcomes_to', 'route_id']);
  t.equal(statements('finalize_delete').length, 2, 'a file may hold several statements');
});

t.test('a variant leaves named includes out', async (t) => {
  const closed = statementWithout('rollup', ['rollup_open_days', 'rollup_select_days']);
  t.match(
    statementWithout('rollup', ['rollup_select_days']).text,
    /FROM scheduled_trips/,
    'the full rollup reads open past days from scheduled_trips',
  );
  t.notMatch(closed.text, /scheduled_trips/, 'the variant does not');
  t.notMatch(closed.text, /\{\{/, 'no include left');
  t.notOk(closed.params.includes('open_from'), 'its parameters are its own');
  t.throws(() => statementWithout('rollup', ['no_such_part']), /not found/);
});

t.test('mistakes fail loudly', async (t) => {
  t.throws(() => statement('no_such_file'), /not found/);
  t.throws(() => statement('finalize_delete'), /holds 2 statements/);
  t.throws(() => bind(statement('snapshot'), { mode: 'bus' }), /\$route_ids not bound/);
  t.same(
    bind(statement('finalize_summary'), { service_date: '2024-01-01', unused: 1 }),
    { service_date: '2024-01-01' },
    'bindings a statement does not use are left out (DuckDB refuses them)',
  );
});
