// Revocation ends everything a key holds, on the real server (one process): `keys revoke`
// through the admin socket ends the key's open streams (the events stream and a query stream)
// with a final `: revoked` comment, its webhook endpoints stop receiving while another key's keep
// receiving, the deliveries it had queued show `cancelled` in the audit, and `keys show|endpoints`
// let the operator see and delete them, through the socket and on the file once stopped.
import type http from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { createKey } from '../accounts/keys.ts';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { rawEvent } from './support/events.ts';
import { captureLogs } from './support/logs.ts';
import { op, tempDir, writeJson } from './support/service-process.ts';
import { openSse, type SseConnection } from './support/sse-client.ts';
import { startReceiver, type Receiver } from './support/webhooks.ts';
import { listDeliveries } from '../webhooks/deliveries.ts';

t.setTimeout(240_000);

const alert = (n: number) => rawEvent('alert.created', { modes: ['bus'], routes: ['7'], data: { n } });

async function until(what: string, probe: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves true when the stream ends within `ms`. */
function endsWithin(stream: SseConnection, ms: number): Promise<boolean> {
  return Promise.race([stream.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

t.test('a revoked key loses its streams and webhooks at once', async (t) => {
  const dir = tempDir(t.teardown.bind(t), 'key-revocation-');
  const file = join(dir, 'transit.json');
  const settings = {
    host: '127.0.0.1',
    port: 0,
    db_path: join(dir, 'transit.duckdb'),
    webhooks: { allow_private_targets: true },
    exports: { enabled: false, dir: join(dir, 'exports') },
    snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
  };
  writeJson(file, settings);
  const logs = captureLogs('info');
  const service = await startService(parseConfig(settings), { log: logs.logger, poll: false });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : service.close()));
  const db = service.runtime.db;
  const leaked = await createKey(db, { plan: 'max', name: 'leaked' });
  const fine = await createKey(db, { plan: 'max', name: 'fine' });
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  // a receiver answering 204, except on /failing (500: the delivery waits for its retry)
  const receiver: Receiver = await startReceiver((req, res: http.ServerResponse) => {
    res.writeHead(req.path === '/failing' ? 500 : 204).end();
  });
  t.teardown(() => receiver.close());
  const register = async (key: string, path: string) => {
    const res = await fetch(`${service.url}/api/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}${path}`, filters: { event_types: ['alert.created'] } }),
    });
    t.equal(res.status, 201, `${path} registered`);
    return ((await res.json()) as { id: string }).id;
  };
  const leakedOk = await register(leaked.key, '/leaked');
  const leakedFailing = await register(leaked.key, '/failing');
  await register(fine.key, '/fine');
  const to = (path: string) => receiver.requests.filter((r) => r.path === path).length;

  const streams: SseConnection[] = [];
  t.teardown(() => Promise.all(streams.map((s) => s.close())));
  const open = async (path: string, key: string) => {
    const s = await openSse(`${service.url}${path}`, auth(key));
    streams.push(s);
    t.equal(s.status, 200, `${path} open`);
    return s;
  };
  const events = await open('/api/v1/events/stream', leaked.key);
  const query = await open('/api/v1/bus/alerts?format=sse', leaked.key);
  const other = await open('/api/v1/events/stream', fine.key);
  await query.waitFor((e) => e.some((x) => x.event === 'reset'));

  service.runtime.bus.publish(alert(1));
  await events.waitFor((e) => e.some((x) => x.event === 'alert.created'));
  await until('the first deliveries', () => to('/leaked') >= 1 && to('/failing') >= 1 && to('/fine') >= 1);
  await until('the failed attempt recorded', async () =>
    (await listDeliveries(db, leaked.id, { limit: 10 })).data.some((d) => d.state === 'retrying'),
  );

  const revokedAt = Date.now();
  const revoked = await op('keys', ['revoke', leaked.id, '--config', file]);
  t.equal(revoked.code, 0, revoked.err);
  t.match(revoked.out, /2 webhook endpoints disabled, 1 queued delivery cancelled/);
  // the service ended the streams before it answered the command; the client sees the end at once
  for (const [name, stream] of [
    ['events stream', events],
    ['query stream', query],
  ] as const) {
    t.ok(await endsWithin(stream, 1_000), `the ${name} ended within 1 s of the revocation`);
    t.equal(stream.comments.at(-1), 'revoked', `the ${name} ends with the revoked comment`);
  }
  t.comment(`both streams ended ${Date.now() - revokedAt} ms after the revoke command was sent`);
  t.notOk(await endsWithin(other, 50), "another key's stream stays open");
  const again = await openSse(`${service.url}/api/v1/events/stream`, auth(leaked.key));
  t.equal(again.status, 401, 'a reconnect is refused');

  // later events reach the other key's endpoint and stream, none the revoked key's
  const seen = { leaked: to('/leaked'), failing: to('/failing') };
  for (let n = 2; n <= 4; n++) service.runtime.bus.publish(alert(n));
  await until('the later deliveries to the other key', () => to('/fine') >= 4);
  await other.waitFor((e) => e.filter((x) => x.event === 'alert.created').length >= 4);
  t.same({ leaked: to('/leaked'), failing: to('/failing') }, seen, 'nothing more to the revoked key');
  const audit = await listDeliveries(db, leaked.id, { limit: 10 });
  const failing = audit.data.find((d) => d.endpoint_id === leakedFailing)!;
  t.match(failing, { state: 'cancelled', next_attempt_at: null, last_error: 'cancelled: the API key was revoked' });
  t.equal(failing.attempts[0]?.outcome, 'http_error', 'the failed attempt stays in the audit');
  t.equal(audit.data.length, 2, 'no delivery queued after the revocation');

  // the operator sees the endpoints the key itself can no longer list, and deletes them
  const shown = await op('keys', ['show', leaked.id, '--config', file]);
  t.equal(shown.code, 0, shown.err);
  t.match(shown.out, /^revoked_at {2}\d{4}-/m);
  t.match(shown.out, /^webhooks {4}2 endpoints, 0 enabled/m);
  const listed = await op('keys', ['endpoints', leaked.id, '--json', '--config', file]);
  t.equal(listed.code, 0, listed.err);
  const endpoints = JSON.parse(listed.out) as Array<{ id: string; disabled_reason: string; deliveries: object }>;
  t.same(endpoints.map((e) => e.disabled_reason).sort(), ['key_revoked', 'key_revoked']);
  t.match(endpoints.find((e) => e.id === leakedFailing)!.deliveries, { cancelled: 1 });
  t.match(endpoints.find((e) => e.id === leakedOk)!.deliveries, { succeeded: 1 });
  const deleted = await op('keys', ['endpoints', leaked.id, '--delete', leakedOk, '--config', file]);
  t.equal(deleted.code, 0, deleted.err);
  t.match(deleted.out, `deleted ${leakedOk}`);

  // stopped: the same commands on the database file
  await service.close();
  stopped = true;
  const offline = await op('keys', ['endpoints', leaked.id, '--delete-all', '--config', file]);
  t.equal(offline.code, 0, offline.err);
  t.match(offline.out, `deleted ${leakedFailing}`);
  const none = await op('keys', ['endpoints', leaked.id, '--config', file]);
  t.equal(none.out.trim(), `${leaked.id} has no webhook endpoints`);
  t.same(
    logs.lines.filter((l) => l.level >= 50).map((l) => l.msg),
    [],
    'no error logged',
  );
});
