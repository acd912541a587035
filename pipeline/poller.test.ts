import t from 'tap';
import { VirtualTimeScheduler } from 'rxjs';
import { FeedSchema, type FeedConfig } from '../core/config.ts';
import { newPoll, type FeedPoll, type PollStatus } from '../core/types.ts';
import { nextDelayMs, pollFeeds } from './poller.ts';

const feed = (id: string, interval_s: number, backoff_max_s = 60): FeedConfig =>
  FeedSchema.parse({ id, kind: 'gtfs-rt', url: `http://x/${id}`, interval_s, backoff_max_s });

const result = (feedId: string, status: PollStatus, at: number): FeedPoll => newPoll(feedId, at, status);

/** Runs virtual time forward one scheduled action at a time, letting promises settle between. */
async function advance(scheduler: VirtualTimeScheduler, untilMs: number): Promise<void> {
  for (let guard = 0; guard < 10_000; guard++) {
    await new Promise((r) => setImmediate(r));
    const next = (scheduler as unknown as { actions: { delay: number }[] }).actions[0];
    if (!next || next.delay > untilMs) return;
    scheduler.maxFrames = next.delay;
    scheduler.flush();
  }
}

t.test('nextDelayMs: cadence on success, jittered capped exponential backoff on failure', async (t) => {
  const f = feed('a', 10, 60);
  t.equal(
    nextDelayMs(f, 0, 3_000, () => 0),
    7_000,
    'keeps cadence from the last start',
  );
  t.equal(
    nextDelayMs(f, 0, 12_000, () => 0),
    0,
    'a slow poll is followed at once',
  );
  t.equal(
    nextDelayMs(f, 1, 0, () => 0.999999),
    10_000,
  );
  t.equal(
    nextDelayMs(f, 1, 0, () => 0),
    5_000,
    'jitter halves at most',
  );
  t.equal(
    nextDelayMs(f, 3, 0, () => 0.999999),
    40_000,
  );
  t.equal(
    nextDelayMs(f, 10, 0, () => 0.999999),
    60_000,
    'capped',
  );
  t.equal(
    nextDelayMs(f, 1000, 0, () => 0.999999),
    60_000,
    'no overflow',
  );
});

t.test('feeds poll on their own cadence; failures back off; a throw never ends the stream', async (t) => {
  const scheduler = new VirtualTimeScheduler();
  const starts: Record<string, number[]> = { fast: [], flaky: [] };
  const flakyPlan: (PollStatus | 'throw')[] = ['timeout', 'throw', 'http_error', 'ok', 'ok'];
  const polls: FeedPoll[] = [];
  const sub = pollFeeds(
    [feed('fast', 10), feed('flaky', 10)],
    async (f) => {
      starts[f.id]!.push(scheduler.now());
      if (f.id === 'fast') return result(f.id, 'ok', scheduler.now());
      const step = flakyPlan.shift() ?? 'ok';
      if (step === 'throw') throw new Error('bug in poll');
      return result(f.id, step, scheduler.now());
    },
    { scheduler, random: () => 0.999999 },
  ).subscribe((p) => polls.push(p));
  t.teardown(() => sub.unsubscribe());

  await advance(scheduler, 100_000);
  t.same(starts.fast!.slice(0, 4), [0, 10_000, 20_000, 30_000]);
  // failures 1, 2, 3 wait 10 s, 20 s, 40 s; then success resets to the interval
  t.same(starts.flaky!.slice(0, 5), [0, 10_000, 30_000, 70_000, 80_000]);
  const flaky = polls.filter((p) => p.feed_id === 'flaky');
  t.same(
    flaky.slice(0, 4).map((p) => p.status),
    ['timeout', 'network_error', 'http_error', 'ok'],
  );
  t.match(flaky[1]!.error, /bug in poll/);
});

t.test('a poll slower than the interval is never overlapped', async (t) => {
  const scheduler = new VirtualTimeScheduler();
  let running = 0;
  let maxRunning = 0;
  let release: (() => void) | undefined;
  let count = 0;
  const sub = pollFeeds(
    [feed('slow', 1)],
    async (f) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      count++;
      if (count === 1)
        await new Promise<void>((r) => {
          release = r;
        });
      running--;
      return result(f.id, 'ok', scheduler.now());
    },
    { scheduler },
  ).subscribe();
  t.teardown(() => sub.unsubscribe());
  await advance(scheduler, 5_000);
  t.equal(count, 1, 'while the first poll hangs, no second one starts');
  release!();
  await advance(scheduler, 8_000);
  t.ok(count >= 3);
  t.equal(maxRunning, 1);
});
