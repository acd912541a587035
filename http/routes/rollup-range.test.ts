import t from 'tap';
import { ApiError } from '../../core/errors.ts';
import { requestWindow, resolveRange } from './rollup-range.ts';

const retained = { earliest: '2024-03-01', latest: '2024-04-30', finalized_through: '2024-04-29' };

t.test('the window runs from the first retained day to today or the last day with rows', async (t) => {
  t.same(requestWindow('rail', retained, '2024-05-01'), {
    from: '2024-03-01',
    to: '2024-05-01',
    finalized_through: '2024-04-29',
  });
  t.same(
    requestWindow('rail', { ...retained, latest: '2024-05-02' }, '2024-05-01')?.to,
    '2024-05-02',
    'rows of a later service date (cancellations announced ahead) keep it open',
  );
  t.equal(requestWindow('rail', null, '2024-05-01'), null, 'rail without rows: no window (404)');
  t.equal(requestWindow('streetcar', null, '2024-05-01'), null);
  t.same(
    requestWindow('bus', null, '2024-05-01'),
    { from: '2024-05-01', to: '2024-05-01', finalized_through: null },
    'bus without rows: today alone',
  );
});

t.test('defaults: the last 28 days, moved inside the window', async (t) => {
  const window = { from: '2024-03-01', to: '2024-05-01', finalized_through: null };
  t.same(resolveRange('bus', {}, window, '2024-05-01'), { from: '2024-04-04', to: '2024-05-01' });
  t.same(resolveRange('bus', {}, { ...window, from: '2024-04-20' }, '2024-05-01'), {
    from: '2024-04-20',
    to: '2024-05-01',
  });
  t.same(resolveRange('bus', { to: '2024-03-10' }, window, '2024-05-01'), { from: '2024-03-01', to: '2024-03-10' });
  t.same(resolveRange('bus', { from: '2024-04-30' }, window, '2024-05-01'), { from: '2024-04-30', to: '2024-05-01' });
  const ahead = { from: '2024-05-02', to: '2024-05-03', finalized_through: null };
  t.same(
    resolveRange('bus', {}, ahead, '2024-05-01'),
    { from: '2024-05-02', to: '2024-05-02' },
    'a window that starts after today (only announced days) still gives a range',
  );
  t.same(resolveRange('bus', { from: '2024-05-03' }, ahead, '2024-05-01'), { from: '2024-05-03', to: '2024-05-03' });
  t.same(
    resolveRange('bus', { from: '2024-04-10', to: '2024-04-02' }, window, '2024-05-01'),
    { from: '2024-04-10', to: '2024-04-02' },
    'an inverted range is left for the rollup to refuse',
  );
});

t.test('explicit dates outside the window: 400 outside_retention naming it', async (t) => {
  const window = { from: '2024-03-01', to: '2024-05-01', finalized_through: null };
  for (const [asked, parameter] of [
    [{ from: '2024-02-29' }, 'from'],
    [{ to: '2024-05-02' }, 'to'],
    [{ from: '2024-05-02', to: '2024-05-03' }, 'from'],
  ] as const) {
    const err = (() => {
      try {
        resolveRange('rail', asked, window, '2024-05-01');
      } catch (e) {
        return e;
      }
      return null;
    })();
    t.ok(err instanceof ApiError, JSON.stringify(asked));
    const e = err as ApiError;
    t.equal(e.code, 'outside_retention');
    t.equal(e.extra.errors?.[0]?.parameter, parameter);
    t.match(e.detail, /rail reliability: 2024-03-01 to 2024-05-01/);
    t.same(e.extra.members, { retained_window: window });
  }
});
