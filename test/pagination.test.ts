// Keyset pagination walked to the end while rows are added, changed and removed between pages:
// no duplicates, no gaps among rows that existed throughout; cursors are tamper-evident.
import t from 'tap';
import type { Alert } from '../core/types.ts';
import { makeAlert, makeArrival, makeVehicle, FakeLive } from './support/fake-live.ts';
import { bearer, startHarness } from './support/harness.ts';
import { checker, loadValidator } from './support/client.ts';
import { NOW } from './support/network.ts';

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

t.test('pagination under concurrent change', async (t) => {
  const live = new FakeLive();
  const random = seeded(7);
  const modes = ['rail', 'bus', 'streetcar'] as const;
  let serial = 0;
  const newAlert = (firstSeen: number): Alert => {
    serial++;
    return makeAlert({
      id: `feed:al-${String(serial).padStart(4, '0')}`,
      modes: [modes[serial % 3]!],
      first_seen_ms: firstSeen,
    });
  };
  // ties on first_seen on purpose: the id must break them
  for (let i = 0; i < 150; i++) live.alertList.push(newAlert(NOW - Math.floor(i / 3) * 1000));
  for (let i = 0; i < 60; i++)
    live.vehicleList.push(makeVehicle({ vehicle_id: `v${String(i).padStart(3, '0')}`, route_id: String(i % 7) }));
  const h = await startHarness({ live });
  t.teardown(() => h.close());
  const call = checker(t, h, await loadValidator(h));
  const key = bearer(await h.key('max'));

  const walk = async (first: string, between: (page: number) => void, seen: string[] = []) => {
    let next: string | null = first;
    let pages = 0;
    while (next) {
      const r = await call(next, key);
      t.equal(r.status, 200);
      seen.push(...r.json.data.map((row: { id: string }) => row.id));
      next = r.json.links.next;
      t.equal(r.json.meta.next_cursor === null, next === null);
      between(++pages);
    }
    return { seen, pages };
  };

  t.test('alerts: inserts before and after the cursor, updates, removals', async (t) => {
    const initial = new Set(live.alertList.map((a) => a.id));
    const removed = new Set<string>();
    const seen: string[] = [];
    const { pages } = await walk(
      '/api/v1/alerts?limit=7',
      (page) => {
        live.change((l) => {
          // newer alerts (before the cursor), older ones (anywhere), an update, a removal
          l.alertList = [...l.alertList, newAlert(NOW + page * 1000), newAlert(NOW - Math.floor(random() * 60) * 1000)];
          const i = Math.floor(random() * l.alertList.length);
          const old = l.alertList[i]!;
          l.alertList[i] = { ...old, version: old.version + 1, updated_ms: NOW + page, status: 'resolved' };
          if (page % 5 === 0) {
            const victim = l.alertList.find((a) => initial.has(a.id) && !removed.has(a.id) && !seen.includes(a.id));
            if (victim) {
              removed.add(victim.id);
              l.alertList = l.alertList.filter((a) => a !== victim);
            }
          }
        });
      },
      seen,
    );
    t.ok(pages > 20, `walked ${pages} pages`);
    t.equal(new Set(seen).size, seen.length, 'no duplicates');
    const missing = [...initial].filter((id) => !removed.has(id) && !seen.includes(id));
    t.same(missing, [], 'no gaps: every alert present throughout was returned');
  });

  t.test('a filtered walk keeps its filter and order', async (t) => {
    const { seen } = await walk('/api/v1/alerts?mode=bus&limit=4', () => {
      live.change((l) => {
        l.alertList = [...l.alertList, newAlert(NOW - Math.floor(random() * 100) * 1000)];
      });
    });
    t.equal(new Set(seen).size, seen.length);
    const byId = new Map(live.alertList.map((a) => [a.id, a]));
    t.ok(
      seen.every((id) => byId.get(id)!.modes.includes('bus')),
      'only bus alerts',
    );
    const keys = seen.map((id) => [-byId.get(id)!.first_seen_ms, id] as const);
    t.ok(
      keys.every((k, i) => i === 0 || keys[i - 1]![0] < k[0] || (keys[i - 1]![0] === k[0] && keys[i - 1]![1] < k[1])),
      'newest first, id breaks ties',
    );
  });

  t.test('bus realtime: vehicles move and appear between pages', async (t) => {
    const initial = new Set(live.vehicleList.map((v) => `${v.feed_id}:${v.vehicle_id}`));
    let added = 0;
    const { seen } = await walk('/api/v1/bus/realtime?limit=9', () => {
      live.change((l) => {
        l.vehicleList = l.vehicleList.map((v) => ({ ...v, lat: v.lat + 0.001, timestamp_ms: v.timestamp_ms + 15_000 }));
        l.vehicleList.push(makeVehicle({ vehicle_id: `new${added++}`, route_id: String(added % 7) }));
      });
    });
    t.equal(new Set(seen).size, seen.length, 'no duplicates');
    t.same(
      [...initial].filter((id) => !seen.includes(id)),
      [],
      'no gaps',
    );
  });

  t.test('cursors are opaque, bound to their query and tamper-evident', async (t) => {
    const page = await call('/api/v1/alerts?mode=rail&limit=2', key);
    const cursor: string = page.json.meta.next_cursor;
    t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'base64url');
    t.equal((await call(`/api/v1/alerts?mode=rail&limit=5&cursor=${cursor}`, key)).status, 200, 'limit may change');
    const [payload, sig] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify([-NOW - 1e6, 'zzz'])).toString('base64url');
    const cases: Array<[string, string]> = [
      ['other filters', `/api/v1/alerts?mode=bus&limit=2&cursor=${cursor}`],
      ['other endpoint', `/api/v1/rail/alerts?limit=2&cursor=${cursor}`],
      ['forged payload', `/api/v1/alerts?mode=rail&limit=2&cursor=${forged}.${sig}`],
      ['flipped signature', `/api/v1/alerts?mode=rail&limit=2&cursor=${payload}.${sig.slice(0, -2)}AA`],
      ['garbage', '/api/v1/alerts?mode=rail&cursor=%%%'],
      ['empty', '/api/v1/alerts?mode=rail&cursor='],
      ['no signature', `/api/v1/alerts?mode=rail&cursor=${payload}`],
    ];
    for (const [what, path] of cases) {
      const r = await call(path, key);
      t.equal(r.status, 400, what);
      t.match(r.json, { code: 'invalid_cursor', errors: [{ parameter: 'cursor' }] }, what);
    }
  });

  t.test('rail realtime walks to the end while predictions change', async (t) => {
    live.change((l) => {
      for (let trip = 0; trip < 8; trip++) {
        for (let stop = 1; stop <= 5; stop++) {
          l.arrivalList.push(
            makeArrival({
              trip_id: `R${trip}`,
              station_id: `st-${stop}`,
              stop_sequence: stop,
              route_id: trip % 2 ? 'Red' : 'Blue',
            }),
          );
        }
      }
    });
    const initial = new Set(live.arrivalList.map((a) => `${a.feed_id}:${a.trip_id}:${a.stop_sequence}`));
    const { seen } = await walk('/api/v1/rail/realtime?limit=6', (page) => {
      live.change((l) => {
        l.arrivalList = l.arrivalList.map((a) => ({
          ...a,
          delay_s: (a.delay_s ?? 0) + page,
          predicted_ms: (a.predicted_ms ?? 0) + 1000,
        }));
      });
    });
    t.equal(seen.length, initial.size);
    t.same(new Set(seen), initial);
  });
});
