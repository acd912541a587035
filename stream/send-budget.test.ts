import t from 'tap';
import { SendBudget, type CutReason } from './send-budget.ts';

function setup(budgetBytes: number, stallTimeoutMs = 20_000) {
  const clock = { now: 0 };
  const cuts: Array<[string, CutReason]> = [];
  const budget = new SendBudget({ budgetBytes, stallTimeoutMs, now: () => clock.now });
  const conn = (name: string) => {
    const entry = budget.register((reason) => {
      cuts.push([name, reason]);
      // what the socket layer does: the closed connection releases its account
      entry.release();
    });
    return entry;
  };
  return { clock, cuts, budget, conn };
}

t.test('past the budget the longest-stalled streams are cut first, until it fits again', async (t) => {
  const { clock, cuts, budget, conn } = setup(1_000);
  const a = conn('a');
  const b = conn('b');
  const c = conn('c');
  const healthy = conn('healthy');
  a.report(300, false);
  clock.now = 1_000;
  b.report(300, false);
  clock.now = 2_000;
  c.report(300, false);
  t.equal(budget.bufferedBytes, 900);
  t.same(cuts, [], 'within the budget nobody is cut');

  clock.now = 3_000;
  a.report(350, true); // a drained some and queued more: its stall clock restarts behind c
  b.report(450, false); // b keeps falling behind without progress
  t.same(cuts, [['b', 'budget']], 'b is now the longest-stalled (a made progress); cutting it is enough');
  t.equal(budget.bufferedBytes, 650);

  healthy.report(200, false);
  healthy.report(0, true);
  t.equal(budget.bufferedBytes, 650, 'a stream whose backlog drained holds nothing');
  c.report(700, false);
  t.same(
    cuts.map(([n]) => n),
    ['b', 'c'],
    'c (stalled since 2 s) goes before a (progress at 3 s), and that fits',
  );
  t.same(budget.stats(), { bufferedBytes: 350, stalled: 1, streams: 2, cutForBudget: 2, cutForStall: 0 });
});

t.test('a stream stalled for the timeout is cut by the sweep, whatever the budget', async (t) => {
  const { clock, cuts, budget, conn } = setup(1_000_000, 20_000);
  const quiet = conn('quiet');
  const slow = conn('slow');
  const reader = conn('reader');
  quiet.report(10, false);
  clock.now = 5_000;
  slow.report(10, false);
  reader.report(10, false);
  clock.now = 15_000;
  slow.report(50, false); // more queued is no progress
  reader.report(20, true);
  clock.now = 20_000;
  budget.sweep();
  t.same(cuts, [['quiet', 'stalled']], 'stalled 20 s: cut');
  clock.now = 25_000;
  budget.sweep();
  t.same(
    cuts,
    [
      ['quiet', 'stalled'],
      ['slow', 'stalled'],
    ],
    'queuing more did not restart its clock',
  );
  clock.now = 34_999;
  budget.sweep();
  t.equal(cuts.length, 2, 'the reader drained at 15 s: it has until 35 s');
  reader.report(0, true);
  clock.now = 100_000;
  budget.sweep();
  t.equal(cuts.length, 2, 'a drained stream is not stalled');
  t.same(budget.stats(), { bufferedBytes: 0, stalled: 0, streams: 1, cutForBudget: 0, cutForStall: 2 });
});

t.test('reports after release are ignored and a cut that throws does not stop the pass', async (t) => {
  const budget = new SendBudget({ budgetBytes: 100, stallTimeoutMs: 1_000, now: () => 0 });
  const thrower = budget.register(() => {
    throw new Error('close failed');
  });
  const other = budget.register(() => undefined);
  thrower.report(80, false);
  other.report(80, false);
  t.equal(budget.bufferedBytes, 80, 'the thrower was released before its close threw');
  t.equal(budget.cutForBudget, 1);
  thrower.report(500, false);
  t.equal(budget.bufferedBytes, 80, 'a released entry reports nothing');
  other.release();
  other.release();
  t.same(budget.stats(), { bufferedBytes: 0, stalled: 0, streams: 0, cutForBudget: 1, cutForStall: 0 });
  t.throws(() => new SendBudget({ budgetBytes: 0, stallTimeoutMs: 1 }), RangeError);
});
