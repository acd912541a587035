// kill -9 while deliveries are pending and in flight; after a restart every delivery
// arrives (at least once, same webhook-id) and the audit holds every attempt.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Db } from '../store/db.ts';
import { createEndpoint } from './endpoints.ts';
import { enqueueEvents } from './outbox.ts';
import { startReceiver, verifyDelivery, webhookSecrets, type Reply } from '../test/support/webhooks.ts';
import { rawEvent } from '../test/support/events.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..');

interface Child {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

function startChild(dbPath: string): Child {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'test', 'support', 'webhook-crash-child.ts'), dbPath],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  proc.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => resolve({ code, signal }));
  });
  // a failed wait must not leave the child holding the test file open until tap's own timeout
  t.teardown(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  return { proc, exited, output: () => output };
}

async function waitOrExplain(promise: Promise<void>, child: Child): Promise<void> {
  const died = child.exited.then(({ code, signal }) => {
    throw new Error(`child exited early (${code ?? signal}):\n${child.output()}`);
  });
  await Promise.race([promise, died]);
}

t.test('a killed worker loses nothing: every delivery arrives and every attempt is audited', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'outbox.duckdb');
  const hold: Reply = () => undefined;
  const receiver = await startReceiver(hold);
  t.teardown(() => receiver.close());

  // 2 endpoints x 6 events = 12 deliveries, stored before any worker runs
  const seed = await Db.open(dbPath);
  const policy = { allow: new Set(['loopback'] as const) };
  const secrets = new Map<string, string>();
  for (const name of ['a', 'b']) {
    const ep = await createEndpoint(
      seed,
      'key_crash',
      { url: `${receiver.url}/${name}`, filters: {} },
      { policy, secrets: webhookSecrets },
    );
    secrets.set(`/${name}`, ep.secret);
  }
  const now = Date.now();
  const events = Array.from({ length: 6 }, (_, i) =>
    rawEvent('alert.created', { at_ms: now + i, modes: ['bus'], routes: ['1'], data: { n: i } }),
  );
  t.same(await enqueueEvents(seed, events, now), { messages: 6, deliveries: 12, rejected: 0 });
  await seed.close();

  // first run: the receiver holds every request open; 4 go in flight (the concurrency bound)
  const first = startChild(dbPath);
  await waitOrExplain(receiver.waitFor(4, 45_000), first);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(receiver.requests.length, 4, 'exactly the bounded number in flight, 8 still pending');
  first.proc.kill('SIGKILL');
  t.same(await first.exited, { code: null, signal: 'SIGKILL' });

  // second run: the receiver answers; in-flight ones are retried, pending ones sent
  receiver.reply = (_req, res) => res.writeHead(200).end();
  const second = startChild(dbPath);
  await waitOrExplain(receiver.waitFor(16, 45_000), second);
  t.match(second.output(), /recovered=4/);
  second.proc.kill('SIGTERM');
  t.same(await second.exited, { code: 0, signal: null });

  for (const req of receiver.requests)
    t.ok(verifyDelivery(secrets.get(req.path)!, req), `${req.path} ${req.headers['webhook-id']} verifies`);
  const received = new Map<string, number>();
  for (const req of receiver.requests) {
    const k = `${req.path} ${req.headers['webhook-id']}`;
    received.set(k, (received.get(k) ?? 0) + 1);
  }
  t.equal(received.size, 12, 'every delivery arrived');
  t.same(
    [...received.values()].sort(),
    [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2],
    'the 4 in flight arrived twice, same webhook-id',
  );

  const db = await Db.open(dbPath);
  t.teardown(() => db.close());
  const deliveries = await db.all<{
    delivery_id: string;
    message_id: string;
    url: string;
    state: string;
    attempt_count: number;
  }>(
    `SELECT d.delivery_id, d.message_id, e.url, d.state, d.attempt_count FROM webhook_deliveries d
     JOIN webhook_endpoints e USING (endpoint_id)`,
  );
  t.equal(deliveries.length, 12);
  t.ok(
    deliveries.every((d) => d.state === 'succeeded'),
    'all succeeded',
  );
  const attempts = await db.all<{ delivery_id: string; attempt: number; outcome: string; error: string | null }>(
    'SELECT delivery_id, attempt, outcome, error FROM webhook_attempts ORDER BY delivery_id, attempt',
  );
  t.equal(attempts.length, receiver.requests.length, 'one audited attempt per request the receiver saw');
  for (const d of deliveries) {
    const path = new URL(d.url).pathname;
    const mine = attempts.filter((a) => a.delivery_id === d.delivery_id);
    t.equal(mine.length, received.get(`${path} ${d.message_id}`), `${d.delivery_id}: attempts match requests`);
    t.equal(d.attempt_count, mine.length);
    t.equal(mine[mine.length - 1]!.outcome, 'succeeded');
    if (mine.length === 2) {
      t.equal(mine[0]!.outcome, 'interrupted');
      t.match(mine[0]!.error, /process stopped before the response was recorded/);
    }
  }
});
