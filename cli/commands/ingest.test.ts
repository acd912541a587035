import t from 'tap';
import { describeFindings, describeMatching } from './ingest.ts';

t.test('ingest prints the match rate per feed and what each strategy decided', async (t) => {
  t.equal(describeMatching(null, true), null, 'no trips looked up: no line');
  t.equal(
    describeMatching(
      {
        trips: 257,
        matched: 241,
        unmatched: 12,
        ambiguous: 4,
        previous_day: 3,
        match_rate: 241 / 257,
        strategies: {
          exact: { matched: 0, unmatched: 257, ambiguous: 0 },
          nyct: { matched: 241, unmatched: 12, ambiguous: 4 },
        },
      },
      true,
    ),
    'trips matched to the schedule: 241 of 257 (93.8 %); exact 0/257, nyct 241/257 (4 ambiguous); ' +
      '4 ambiguous, 3 on the service day before their start_date',
  );
  t.equal(
    describeMatching(
      {
        trips: 20,
        matched: 0,
        unmatched: 20,
        ambiguous: 0,
        previous_day: 0,
        match_rate: 0,
        strategies: {},
      },
      false,
    ),
    'trips matched to the schedule: 0 of 20 (0.0 %): no schedule for this feed (set feeds[].schedule_id, or configure one schedule)',
    '0 of 20 is not silent, and says why',
  );
});

t.test('ingest prints the feed rules that fired, with an entity each', async (t) => {
  t.equal(describeFindings(undefined), null, 'no body checked: no line');
  t.equal(describeFindings({}), 'feed rules: no findings');
  t.equal(
    describeFindings({
      W009: { count: 19, example: 'tu-1' },
      E022: { count: 3, example: '1234' },
      E018: { count: 1, example: null },
    }),
    'feed rules: E018 ×1, E022 ×3 (e.g. entity 1234), W009 ×19 (e.g. entity tu-1) ' +
      '(transit-api validate prints each one; docs/guides/feed-quality.md)',
  );
});
