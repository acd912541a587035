import t from 'tap';
import { percent } from './coverage.ts';
import { compareCodePoints, dayRows, groupedRows } from './rollup-rows.ts';

const COUNTS = [
  'scheduled',
  'delivered',
  'canceled',
  'canceled_unscheduled',
  'partially_canceled',
  'unobserved',
  'pending',
  'added',
];
// 2024-12-28 (Saturday) .. 2025-01-03: days 0..6 from `first`
const calendar = { first: '2024-12-28', to: '2025-01-03', final: '1111100', observed: '1011111' };

t.test('day rows come out by route and day whatever order the query returned them in', async (t) => {
  const names = [
    'route_id',
    'route_no',
    'day',
    ...COUNTS,
    'delivered_7d',
    'scheduled_7d',
    'unobserved_7d',
    'pending_7d',
  ];
  const rows = [
    ['B', 2, 6, 4, 3, 1, 0, 0, 0, 0, 0, 9, 12, 0, 0],
    ['A', 1, 6, 2, 2, 0, 0, 0, 0, 0, 0, 5, 5, 0, 0],
    ['B', 2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 6, 8, 0, 0],
    ['A', 1, 5, 3, 1, 2, 0, 0, 0, 0, 0, 3, 10, 6, 1],
  ];
  const columns = names.map((_, i) => rows.map((r) => r[i]!));
  const out = dayRows(names, columns, calendar, true);
  t.same(
    out.map((r) => `${r.route_id} ${r.period}`),
    ['A 2025-01-02', 'A 2025-01-03', 'B 2025-01-02', 'B 2025-01-03'],
  );
  t.same(out[0], {
    route_id: 'A',
    period: '2025-01-02',
    period_start: '2025-01-02',
    period_end: '2025-01-02',
    service_day: 'weekday',
    days: 1,
    final: false,
    days_observed: 1,
    scheduled: 3,
    delivered: 1,
    canceled: 2,
    canceled_unscheduled: 0,
    partially_canceled: 0,
    unobserved: 0,
    pending: 0,
    added: 0,
    delivered_pct: 33.33,
    observed: 3,
    delivered_pct_of_observed: 33.33,
    rolling_7d: {
      from: '2024-12-27',
      to: '2025-01-02',
      scheduled: 10,
      delivered: 3,
      delivered_pct: 30,
      unobserved: 6,
      observed: 3,
      delivered_pct_of_observed: 100,
    },
  });
});

t.test(
  'grouped rows: every group for every route, zeros where the query had no row, the calendar per group',
  async (t) => {
    const names = ['route_id', 'group_day', 'day_type', ...COUNTS];
    // week of Monday 2024-12-30 = day 2 from `first`; weekdays (type 1) only for route A
    const rows = [['A', 2, 1, 10, 9, 1, 0, 0, 0, 0, 0]];
    const columns = names.map((_, i) => rows.map((r) => r[i]!));
    const out = groupedRows(names, columns, calendar, {
      group: 'week',
      from: '2024-12-28',
      to: '2025-01-03',
      split: true,
      routeId: 'A',
    });
    t.same(
      out.map((r) => [
        r.period,
        r.service_day,
        r.days,
        r.final,
        r.days_observed,
        r.scheduled,
        r.period_start,
        r.period_end,
      ]),
      [
        ['2024-W52', 'saturday', 1, true, 1, 0, '2024-12-28', '2024-12-29'],
        ['2024-W52', 'sunday', 1, true, 0, 0, '2024-12-28', '2024-12-29'],
        ['2025-W01', 'weekday', 5, false, 5, 10, '2024-12-30', '2025-01-03'],
      ],
    );
    const none = groupedRows(names, [], calendar, {
      group: 'period',
      from: '2024-12-28',
      to: '2025-01-03',
      split: false,
    });
    t.same(none, [], 'all routes and no rows: no routes');
  },
);

t.test('percentages and the order of route ids as DuckDB has them', async (t) => {
  t.equal(percent(1, 3), 33.33);
  t.equal(percent(2, 3), 66.67);
  t.equal(percent(0, 0), null);
  const ids = ['b', 'B', '\u{1F68C}', '\uFF21', 'a10', 'a9'];
  t.same(
    [...ids].sort(compareCodePoints),
    ['B', 'a10', 'a9', 'b', '\uFF21', '\u{1F68C}'],
    'code point order, as UTF-8 bytes sort',
  );
});
