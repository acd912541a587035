import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { DomainEvent } from '../core/events.ts';
import { Db } from '../store/db.ts';
import { DuckDbEventLog } from './duckdb-event-log.ts';
import {
  decodeStoredEvent,
  encodeEventPayload,
  idFloor,
  MemoryEventLog,
  parseEventId,
  storedEventBytes,
} from './event-log.ts';
import { logInto } from '../test/support/logs.ts';
import { rawEvent, type RawEventFields } from '../test/support/events.ts';

function event(n: number, overrides: RawEventFields & { type?: DomainEvent['type'] } = {}): DomainEvent {
  return rawEvent(overrides.type ?? 'vehicle.position', {
    at_ms: 1_700_000_000_000 + n,
    modes: ['bus'],
    routes: ['7'],
    data: { n },
    ...overrides,
  });
}

const ids = (list: ReturnType<MemoryEventLog['since']>) => (list === 'too_old' ? list : list.map((e) => e.id));

t.test('append assigns increasing ids from the clock floor and since() replays after an id', async (t) => {
  const log = new MemoryEventLog({ capacity: 10, now: () => 5 });
  t.equal(log.earliestId, null);
  t.equal(log.since(0), 'too_old', 'an empty log cannot vouch for any id');
  const stored = log.append([event(1), event(2), event(3)]);
  t.same(
    stored.map((e) => e.id),
    [5000, 5001, 5002],
  );
  t.equal(log.earliestId, 5000);
  t.equal(log.latestId, 5002);
  t.same(ids(log.since(5000)), [5001, 5002]);
  t.same(ids(log.since(4999)), [5000, 5001, 5002], 'the id just before the earliest still resumes with no gap');
  t.same(ids(log.since(5002)), [], 'up to date: nothing to replay');
  t.equal(log.since(5003), 'too_old', 'an id never issued is not trusted');
  t.equal(log.since(4998), 'too_old');
  const payload = JSON.parse(stored[0]!.payload);
  t.same(payload, {
    version: 1,
    id: stored[0]!.payload && payload.id,
    type: 'vehicle.position',
    timestamp: new Date(1_700_000_000_001).toISOString(),
    modes: ['bus'],
    routes: ['7'],
    lines: [],
    data: { n: 1 },
  });
  t.match(payload.id, /^evt_/);
});

t.test('the ring keeps the newest events and reports evicted ids as too old', async (t) => {
  const log = new MemoryEventLog({ capacity: 3, now: () => 0 });
  log.append([event(1), event(2)]);
  log.append([event(3), event(4), event(5)]);
  t.equal(log.size, 3);
  t.equal(log.earliestId, 3);
  t.equal(log.latestId, 5);
  t.same(ids(log.since(2)), [3, 4, 5]);
  t.equal(log.since(1), 'too_old', 'event 2 was evicted: the client would miss it');
  for (let i = 0; i < 100; i++) log.append([event(i)]);
  t.same(ids(log.since(102)), [103, 104, 105]);
});

t.test('events that cannot be encoded are skipped and counted, not thrown', async (t) => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const rejected: unknown[] = [];
  const log = new MemoryEventLog({ capacity: 5, now: () => 0, onRejected: (e) => rejected.push(e) });
  const stored = log.append([event(1), event(2, { data: cyclic }), event(3, { data: { big: 1n } })]);
  t.equal(stored.length, 1);
  t.equal(log.rejected, 2);
  t.equal(rejected.length, 2);
});

t.test('ids and payloads parse defensively', async (t) => {
  t.equal(parseEventId('123'), 123);
  t.equal(parseEventId(null), null);
  t.equal(parseEventId(''), null);
  t.equal(parseEventId('12a'), null);
  t.equal(parseEventId('-1'), null);
  t.equal(parseEventId('99999999999999999'), null, 'longer than any id we issue');
  t.equal(parseEventId('9999999999999999'), null, 'beyond the safe integer range');
  t.equal(idFloor(1_700_000_000_000.7), 1_700_000_000_000_000);
  t.equal(decodeStoredEvent(1, 'not json'), null);
  t.equal(decodeStoredEvent(1, '{"type":"nope","timestamp":"2024-01-01T00:00:00Z","modes":[],"routes":[]}'), null);
  t.equal(decodeStoredEvent(1, '{"type":"alert.created","timestamp":"bad","modes":[],"routes":[]}'), null);
  t.equal(
    decodeStoredEvent(1, '{"type":"alert.created","timestamp":"2024-01-01T00:00:00Z","modes":"bus","routes":[]}'),
    null,
  );
  t.equal(decodeStoredEvent(1, '[1]'), null);
  t.match(
    decodeStoredEvent(
      7,
      '{"type":"alert.created","timestamp":"2024-01-01T00:00:00Z","modes":["rail",3],"routes":["RED"]}',
    ),
    { id: 7, type: 'alert.created', modes: ['rail'], routes: ['RED'] },
  );
  t.throws(() => new MemoryEventLog({ capacity: 0 }));
});

t.test('the DuckDB log persists, prunes and resumes across a reopen of the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'event-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'events.duckdb');
  let clock = 1_000;

  let db = await Db.open(path);
  let log = await DuckDbEventLog.open(db, { capacity: 4, flushMs: 5, now: () => clock });
  t.equal(log.latestId, null);
  const first = log.append([event(1), event(2), event(3)]);
  t.same(
    first.map((e) => e.id),
    [1_000_000, 1_000_001, 1_000_002],
  );
  await log.flush();
  const second = log.append([
    event(4, { type: 'alert.created', modes: ['rail'], routes: ['RED'] }),
    event(5),
    event(6),
  ]);
  await log.close();
  t.equal(log.persisted, 6);
  const rows = await db.all<{ n: bigint }>('SELECT count(*) AS n FROM event_log');
  t.ok(Number(rows[0]!.n) <= 6 && Number(rows[0]!.n) >= 4, 'older rows pruned once the ring moved on');
  await db.close();

  // a restart: new process, same file, the clock has moved on
  clock = 2_000;
  db = await Db.open(path);
  t.teardown(() => db.close());
  log = await DuckDbEventLog.open(db, { capacity: 4, now: () => clock });
  t.equal(log.size, 4, 'the retained tail is reloaded');
  t.equal(log.latestId, second[2]!.id);
  t.equal(log.earliestId, first[2]!.id);
  const replay = log.since(first[2]!.id);
  t.not(replay, 'too_old');
  if (replay !== 'too_old') {
    t.same(
      replay.map((e) => e.id),
      second.map((e) => e.id),
      'a client that saw event 3 gets 4..6, no gap, no duplicate',
    );
    t.equal(replay[0]!.type, 'alert.created');
    t.same(replay[0]!.modes, ['rail']);
    t.same(replay[0]!.routes, ['RED']);
    t.equal(replay[0]!.payload, second[0]!.payload, 'the payload is byte-identical after the restart');
  }
  t.equal(log.since(first[0]!.id), 'too_old', 'an id older than the retained tail');
  const next = log.append([event(7)]);
  t.equal(next[0]!.id, 2_000_000, 'new ids continue above everything issued before the restart');
  const after = log.since(second[2]!.id);
  t.same(after === 'too_old' ? after : after.map((e) => e.id), [2_000_000]);
  await log.close();
});

t.test('a corrupt row is skipped at reload and a failing store keeps events for the next flush', async (t) => {
  const db = await Db.open(':memory:');
  t.teardown(() => db.close());
  await db.run(`INSERT INTO event_log VALUES (5, 'alert.created', now(), 'garbage')`);
  const messages: string[] = [];
  const log = await DuckDbEventLog.open(db, {
    capacity: 10,
    flushMs: 1,
    now: () => 0,
    log: logInto((m) => messages.push(m)),
  });
  t.equal(log.corruptRows, 1);
  t.equal(log.size, 0);
  t.equal(log.append([event(1)])[0]!.id, 6, 'ids stay above rows already in the table');
  await db.run('ALTER TABLE event_log RENAME TO event_log_away');
  await log.flush();
  t.equal(log.persisted, 0);
  t.ok(messages.some((m) => m.includes('flush failed')));
  await db.run('ALTER TABLE event_log_away RENAME TO event_log');
  await log.close();
  t.equal(log.persisted, 1, 'the kept event is written once the store is back');
});

t.test('the ring drops its oldest events past the byte bound, keeping the newest', async (t) => {
  const pad = (n: number) => event(n, { data: { pad: 'x'.repeat(1_000) } });
  const one = storedEventBytes({ payload: encodeEventPayload(pad(0)) });
  const log = new MemoryEventLog({ capacity: 1_000, maxBytes: one * 5 + 10, now: () => 0 });
  for (let i = 0; i < 20; i++) log.append([pad(i)]);
  t.equal(log.size, 5, 'five events fit in the bound');
  t.ok(log.bytes <= one * 5 + 10, `retained ${log.bytes} bytes`);
  t.equal(log.evictedForBytes, 15);
  t.same(ids(log.since(15)), [16, 17, 18, 19, 20]);
  t.equal(log.since(14), 'too_old', 'evicted for bytes: the client gets reset');

  const big = new MemoryEventLog({ capacity: 10, maxBytes: 100, now: () => 0 });
  big.append([pad(1), pad(2)]);
  t.equal(big.size, 1, 'an event larger than the bound is kept alone, as the newest');
  t.same(ids(big.since(2)), [], 'a client that saw it is up to date');
});

t.test('the ring drops events logged longer ago than the age bound, also when nothing is appended', async (t) => {
  let clock = 1_000_000;
  const log = new MemoryEventLog({ capacity: 100, maxAgeMs: 60_000, now: () => clock });
  const first = log.append([event(1), event(2)]);
  clock += 30_000;
  const second = log.append([event(3)]);
  clock += 40_000; // the first two are 70 s old
  t.same(ids(log.since(first[1]!.id)), [second[0]!.id], 'age is enforced when a client asks');
  t.equal(log.since(first[0]!.id), 'too_old', 'an id evicted for age gets reset');
  t.equal(log.evictedForAge, 2);
  clock += 3_600_000;
  t.same(ids(log.since(second[0]!.id)), [], 'the newest is kept however old: its reader resumes without reset');
  t.equal(log.size, 1);
});

t.test('the DuckDB log keeps its table within the bounds and reads back only what the ring keeps', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'event-log-bounds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'events.duckdb');
  let clock = 1_000_000;
  const pad = (n: number) => event(n, { data: { pad: 'y'.repeat(2_000) } });
  const one = storedEventBytes({ payload: encodeEventPayload(pad(0)) });
  const bounds = {
    capacity: 10_000,
    maxBytes: one * 10,
    maxAgeMs: 600_000,
    flushMs: 1,
    pruneEveryMs: 0,
    now: () => clock,
  };
  let db = await Db.open(path);
  let log = await DuckDbEventLog.open(db, bounds);
  for (let i = 0; i < 100; i++) {
    log.append([pad(i)]);
    if (i % 10 === 9) await log.flush();
  }
  await log.flush();
  const count = async () => Number((await db.all<{ n: bigint }>('SELECT count(*) AS n FROM event_log'))[0]!.n);
  t.equal(log.size, 10);
  t.equal(await count(), 10, 'the table is pruned as the ring moves, not only past the count cap');
  const kept = log.latestId!;
  await log.close();
  await db.close();

  // restart 5 minutes later with a smaller byte bound: only what fits is read back
  clock += 300_000;
  db = await Db.open(path);
  log = await DuckDbEventLog.open(db, { ...bounds, maxBytes: one * 4 });
  t.equal(log.restoredRows, 4);
  t.equal(log.latestId, kept);
  await log.close();
  await db.close();

  // restart after the age bound: only the newest row, so its reader still resumes
  clock += 3_600_000;
  db = await Db.open(path);
  t.teardown(() => db.close());
  log = await DuckDbEventLog.open(db, bounds);
  t.equal(log.restoredRows, 1);
  t.same(ids(log.since(kept)), []);
  t.equal(await count(), 4, 'rows past the bounds at the last close were deleted');
  await log.close();
  t.equal(await count(), 1);
});
