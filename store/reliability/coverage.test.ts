import t from 'tap';
import { coverageNotes, mostlyUnobserved, observedFigures } from './coverage.ts';
import type { RollupRow } from './rollup.ts';

function row(route: string, day: string, counts: Partial<RollupRow>): RollupRow {
  return {
    route_id: route,
    period: day,
    period_start: day,
    period_end: day,
    service_day: 'all',
    days: 1,
    final: true,
    days_observed: 1,
    scheduled: 0,
    delivered: 0,
    canceled: 0,
    canceled_unscheduled: 0,
    partially_canceled: 0,
    unobserved: 0,
    pending: 0,
    added: 0,
    delivered_pct: null,
    observed: 0,
    delivered_pct_of_observed: null,
    rolling_7d: null,
    ...counts,
  };
}

t.test('observed trips: scheduled ones seen, running or canceled; pending and unobserved are not', async (t) => {
  // Caltrain L1 on 2023-11-07: 46 scheduled, 6 seen and all running, 40 never seen
  t.same(observedFigures({ scheduled: 46, delivered: 6, unobserved: 40, pending: 0 }), {
    observed: 6,
    delivered_pct_of_observed: 100,
  });
  t.same(observedFigures({ scheduled: 10, delivered: 6, unobserved: 1, pending: 1 }), {
    observed: 8,
    delivered_pct_of_observed: 75,
  });
  t.same(observedFigures({ scheduled: 5, delivered: 0, unobserved: 5, pending: 0 }), {
    observed: 0,
    delivered_pct_of_observed: null,
  });
  t.equal(mostlyUnobserved({ scheduled: 46, unobserved: 40 }), true);
  t.equal(mostlyUnobserved({ scheduled: 10, unobserved: 5 }), false, 'half is not more than half');
  t.equal(mostlyUnobserved({ scheduled: 0, unobserved: 0 }), false);
});

t.test('notes name the rows, and the 7-day figures, where most trips were never seen', async (t) => {
  const l1 = row('L1', '2023-11-07', { scheduled: 46, delivered: 6, unobserved: 40 });
  const b7 = row('B7', '2023-11-07', { scheduled: 12, delivered: 4, unobserved: 8 });
  const fine = row('L3', '2023-11-07', { scheduled: 14, delivered: 12, unobserved: 2 });
  t.same(coverageNotes([fine], false), [], 'no note when every row saw at least half its trips');

  const [one, ...rest] = coverageNotes([l1], false);
  t.same(rest, []);
  t.match(one, /^More than half of the scheduled trips were never observed in the row \(L1 2023-11-07: 40 of 46\): /);
  t.match(one, /delivered_pct_of_observed is the share of the trips seen that ran/);

  const many = coverageNotes([b7, l1, fine, { ...l1, route_id: 'L4' }, { ...l1, route_id: 'L5' }], false);
  t.equal(many.length, 1);
  t.match(
    many[0],
    /in 4 of 5 rows \(B7 2023-11-07: 8 of 12; L1 2023-11-07: 40 of 46; L4 2023-11-07: 40 of 46; 1 more\)/,
  );

  const rolling = {
    ...fine,
    rolling_7d: {
      from: '2023-11-01',
      to: '2023-11-07',
      scheduled: 100,
      delivered: 12,
      delivered_pct: 12,
      unobserved: 86,
      observed: 14,
      delivered_pct_of_observed: 85.71,
    },
  };
  const seven = coverageNotes([rolling], false);
  t.equal(seven.length, 1, 'the row itself is fine, its 7-day figures are not');
  t.match(
    seven[0],
    new RegExp(
      String.raw`^More than half of the scheduled trips of the 7-day figures were never observed in the row \(L3 ` +
        String.raw`2023-11-07: 86 of 100\)`,
    ),
  );
  t.match(coverageNotes([{ ...l1, service_day: 'weekday' }], true)[0], /L1 2023-11-07 weekday: 40 of 46/);
  const firstDay = { ...l1, rolling_7d: { ...rolling.rolling_7d, scheduled: 46, delivered: 6, unobserved: 40 } };
  t.equal(coverageNotes([firstDay], false).length, 1, "a 7-day window holding only the row's day is not noted twice");
});
