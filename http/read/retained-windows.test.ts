import t from 'tap';
import type { Mode } from '../../core/types.ts';
import { RetainedWindows } from './retained-windows.ts';

const WINDOW = { earliest: '2024-04-01', latest: '2024-05-01', finalized_through: '2024-04-30' };

t.test("a mode's window is reused until it is older than maxAgeMs", async (t) => {
  const loads: Mode[] = [];
  const clock = { ms: 0 };
  const windows = new RetainedWindows(
    async (mode) => {
      loads.push(mode);
      return mode === 'bus' ? WINDOW : null;
    },
    10_000,
    () => clock.ms,
  );
  t.same(await windows.get('bus'), WINDOW);
  t.equal(await windows.get('rail'), null);
  clock.ms = 9_999;
  await windows.get('bus');
  await windows.get('rail');
  t.same(loads, ['bus', 'rail'], 'one load per mode within the age');
  clock.ms = 10_000;
  await windows.get('bus');
  t.same(loads, ['bus', 'rail', 'bus'], 'reloaded once it is as old as maxAgeMs');
});

t.test('concurrent callers share a load; a failed load is not kept', async (t) => {
  let calls = 0;
  let fail = true;
  const windows = new RetainedWindows(async () => {
    calls++;
    await new Promise((r) => setTimeout(r, 5));
    if (fail) throw new Error('database is closed');
    return WINDOW;
  }, 60_000);
  const results = await Promise.allSettled([windows.get('bus'), windows.get('bus')]);
  t.same(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  t.equal(calls, 1);
  fail = false;
  t.same(await windows.get('bus'), WINDOW, 'the next call loads again');
  t.equal(calls, 2);
});

t.test('maxAgeMs 0 loads every time', async (t) => {
  let calls = 0;
  const windows = new RetainedWindows(async () => {
    calls++;
    return WINDOW;
  }, 0);
  await windows.get('bus');
  await windows.get('bus');
  t.equal(calls, 2);
});
