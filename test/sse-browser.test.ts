// Headless Chromium's native EventSource against the real server (key in ?api_key=, as browsers
// cannot send headers): reset and updates, reconnection after the server ends the stream and
// after a restart on the same DuckDB file, resume with no gap and no duplicate, reset for an id
// too old.
import type { Browser, Page } from 'playwright-core';
import t from 'tap';
import { until } from './support/wait.ts';
import { chromiumSkip, launchChromium } from './support/browser.ts';
import { makeAlert } from './support/fake-live.ts';
import { bearer } from './support/harness.ts';
import { sortedData, StreamModel } from './support/stream-model.ts';
import { seqEvent, startStreamHarness } from './support/streaming.ts';

const HUB = { retryMs: 250, maxConnectionMs: 1_500, sweepIntervalMs: 100 };

interface Received {
  type: string;
  id: string;
  data: string;
}

/** Opens an EventSource in the page; what it receives is read back with `received`. */
async function listen(page: Page, name: string, url: string, types: readonly string[]): Promise<void> {
  await page.evaluate(
    ({ name, url, types }) => {
      const w = window as unknown as Record<string, unknown>;
      const got: Received[] = [];
      const state = { got, opens: 0, errors: 0 };
      w[name] = state;
      const es = new EventSource(url);
      w[`${name}_es`] = es;
      es.onopen = () => state.opens++;
      es.onerror = () => state.errors++;
      for (const type of types)
        es.addEventListener(type, (e) =>
          got.push({ type, id: (e as MessageEvent).lastEventId, data: (e as MessageEvent).data }),
        );
    },
    { name, url, types: [...types] },
  );
}

async function state(page: Page, name: string): Promise<{ got: Received[]; opens: number }> {
  return page.evaluate((n) => (window as unknown as Record<string, { got: Received[]; opens: number }>)[n]!, name);
}

t.test('Chromium EventSource', { skip: chromiumSkip }, async (t) => {
  const browser: Browser = await launchChromium();
  t.teardown(() => browser.close());
  const h = await startStreamHarness({ hub: HUB, config: { sse: { event_log_size: 400 } } });
  t.teardown(() => h.close());
  const page = await browser.newPage();
  // a page of the server's own origin (the stream would also work cross-origin: CORS is open)
  await page.goto(`${h.url}/llms.txt`);
  const key = await h.key('max');

  t.test('events stream: drops and a restart, no gap, no duplicate', async (t) => {
    let next = 0;
    const publish = (n: number) => {
      for (let i = 0; i < n; i++) h.publish(seqEvent(next++));
    };
    await listen(page, 'events', `${h.url}/api/v1/events/stream?types=vehicle.position&api_key=${key}`, [
      'vehicle.position',
      'reset',
    ]);
    await until('open', async () => (await state(page, 'events')).opens === 1);
    let timer = setInterval(() => publish(1), 15);
    await until('two drops', async () => (await state(page, 'events')).opens >= 3);
    clearInterval(timer);
    await h.restart();
    publish(20);
    const before = (await state(page, 'events')).opens;
    await until('reconnected after the restart', async () => (await state(page, 'events')).opens > before);
    timer = setInterval(() => publish(1), 15);
    await until('one more drop', async () => (await state(page, 'events')).opens > before + 1);
    clearInterval(timer);
    await until('every event', async () => {
      const got = (await state(page, 'events')).got;
      return got.length > 0 && (JSON.parse(got.at(-1)!.data) as { data: { seq: number } }).data.seq === next - 1;
    });
    const { got } = await state(page, 'events');
    t.same(
      got.filter((e) => e.type === 'reset'),
      [],
      'every reconnection resumed',
    );
    const seqs = got.map((e) => (JSON.parse(e.data) as { data: { seq: number } }).data.seq);
    t.same(
      seqs,
      Array.from({ length: next }, (_, i) => i),
      `all ${next} events, in order, none twice`,
    );
    const ids = got.map((e) => Number(e.id));
    t.ok(
      ids.every((id, i) => i === 0 || id > ids[i - 1]!),
      'ids increase',
    );
    await page.evaluate(() => (window as unknown as Record<string, EventSource>).events_es!.close());
  });

  t.test('an id older than the log: reset, then live events', async (t) => {
    const early = h.streaming.eventLog.earliestId!;
    for (let i = 0; i < 500; i++) h.publish(seqEvent(10_000 + i));
    await until('the log to roll over', () => (h.streaming.eventLog.earliestId ?? 0) > early);
    await listen(page, 'old', `${h.url}/api/v1/events/stream?last_event_id=${early}&api_key=${key}`, [
      'vehicle.position',
      'reset',
    ]);
    await until('the reset', async () => (await state(page, 'old')).got.length > 0);
    h.publish(seqEvent(20_000));
    await until('a live event', async () => (await state(page, 'old')).got.length > 1);
    const { got } = await state(page, 'old');
    t.same(
      got.map((e) => e.type),
      ['reset', 'vehicle.position'],
    );
    t.match(JSON.parse(got[0]!.data), { reason: 'last_event_id_unknown' });
    await page.evaluate(() => (window as unknown as Record<string, EventSource>).old_es!.close());
  });

  t.test('query stream: reset and diffs keep the page equal to the JSON answer across drops', async (t) => {
    const path = '/api/v1/bus/alerts?limit=100';
    await listen(page, 'alerts', `${h.url}${path}&format=sse&api_key=${key}`, ['reset', 'add', 'update', 'remove']);
    await until('the reset', async () => (await state(page, 'alerts')).got.length > 0);
    let n = 0;
    const timer = setInterval(
      () =>
        h.live.change((live) => {
          n++;
          const kept = live.alertList.filter((a) => a.id !== `alerts:bus${n - 4}`);
          live.alertList = [...kept, makeAlert({ id: `alerts:bus${n}`, modes: ['bus'], header: { en: `bus ${n}` } })];
        }),
      50,
    );
    await until('two drops', async () => (await state(page, 'alerts')).opens >= 3);
    clearInterval(timer);
    const json = (await (await fetch(`${h.url}${path}`, { headers: bearer(key) })).json()) as {
      data: Array<Record<string, unknown>>;
    };
    const expected = sortedData(json);
    const model = new StreamModel();
    await until('the page to catch up', async () => {
      const fresh = new StreamModel();
      for (const e of (await state(page, 'alerts')).got) fresh.apply(e.type, e.data, e.id);
      Object.assign(model, fresh);
      return JSON.stringify(fresh.sorted()) === JSON.stringify(expected);
    }).catch(() => undefined);
    t.same(model.sorted(), expected, `after ${n} changes the page holds the JSON answer`);
    t.equal(model.resets, 1, 'one reset, then resumed from history');
    t.ok(model.idsIncrease(), 'no event twice');
  });
});
