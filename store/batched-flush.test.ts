import t from 'tap';
import { BatchedFlush } from './batched-flush.ts';

t.test('flushes run one after another, and a failed one does not stop the next', async (t) => {
  const log: string[] = [];
  let n = 0;
  const flushes = new BatchedFlush(async () => {
    const i = ++n;
    log.push(`start ${i}`);
    await new Promise((r) => setImmediate(r));
    log.push(`end ${i}`);
    if (i === 2) throw new Error('store down');
  });
  const first = flushes.flush();
  const second = flushes.flush();
  const after = flushes.queue(async () => void log.push('prune'));
  const third = flushes.flush();
  await first;
  await t.rejects(second, /store down/);
  await after;
  await third;
  t.strictSame(log, ['start 1', 'end 1', 'start 2', 'end 2', 'prune', 'start 3', 'end 3']);
});

t.test('soon() coalesces into one flush; stop() cancels a due one', async (t) => {
  // the flush timers are unref'd (they must not keep a service alive): without a timer of its
  // own holding the loop, the process may exit before the 1 ms timer fires ("test unfinished")
  const hold = setInterval(() => undefined, 1_000);
  t.teardown(() => clearInterval(hold));
  let flushed = 0;
  let done!: () => void;
  const ran = new Promise<void>((r) => {
    done = r;
  });
  const flushes = new BatchedFlush(async () => {
    flushed++;
    done();
  });
  flushes.soon(1);
  flushes.soon(1);
  await ran;
  await flushes.flush();
  t.equal(flushed, 2, 'one timed flush for two soon() calls, plus the explicit one');
  flushes.soon(1);
  flushes.stop();
  await new Promise((r) => setTimeout(r, 20));
  t.equal(flushed, 2, 'a stopped timer never flushes');
});
