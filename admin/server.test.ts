import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pingAdmin, runAdminCommand } from './client.ts';
import { startAdminServer, socketAnswers, type AdminServerOptions } from './server.ts';
import { adminGet } from '../test/support/admin-socket.ts';

function dir(t: { teardown(fn: () => void): void }): string {
  // os.tmpdir keeps the socket path under the 107-byte limit of a Unix socket address
  const d = mkdtempSync(join(tmpdir(), 'admin-'));
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const ping = () => ({ pid: process.pid, started_at: '2026-01-01T00:00:00.000Z', db_path: 'x.duckdb' });

function options(path: string, extra: Partial<AdminServerOptions> = {}): AdminServerOptions {
  return {
    path,
    ping,
    commands: {
      echo: async (request) => ({
        exit_code: request.positionals.length,
        stdout: `${JSON.stringify(request.values)}\n`,
        stderr: '',
      }),
    },
    ...extra,
  };
}

t.test('runs commands, answers pings, mode 0600, removes its file on close', async (t) => {
  const path = join(dir(t), 'svc.sock');
  const server = await startAdminServer(options(path));
  t.equal(statSync(path).mode & 0o777, 0o600, 'only the owner may connect');
  t.same(await pingAdmin(path), ping());
  const result = await runAdminCommand(path, 'echo', { values: { json: true }, positionals: ['a', 'b'] });
  t.same(result, { exit_code: 2, stdout: '{"json":true}\n', stderr: '' });
  await t.rejects(
    runAdminCommand(path, 'nope', { values: {}, positionals: [] }),
    /refused nope: unknown command "nope"/,
  );
  t.equal((await adminGet(path, '/metrics')).status, 404, 'no metrics without a registry');
  await server.close();
  t.notOk(existsSync(path), 'socket file removed');
  t.equal(await pingAdmin(path), null, 'nothing answers after close');
});

t.test('a stale socket file is replaced; a live one is never taken over', async (t) => {
  const d = dir(t);
  const path = join(d, 'svc.sock');
  // a live listener on `path`, and a socket file left by a process killed while listening
  const live = createServer();
  await new Promise<void>((resolve) => live.listen(path, resolve));
  const killed = spawnSync(process.execPath, [
    '-e',
    `require('net').createServer().listen(${JSON.stringify(`${path}.dead`)}, () => ` +
      `process.kill(process.pid, 'SIGKILL'))`,
  ]);
  t.equal(killed.signal, 'SIGKILL');
  t.ok(existsSync(`${path}.dead`), 'a killed process leaves its socket file');
  t.notOk(await socketAnswers(`${path}.dead`), 'nobody answers on it');
  const replaced = await startAdminServer(options(`${path}.dead`));
  t.same(await pingAdmin(`${path}.dead`), ping(), 'the stale file was replaced');
  await replaced.close();

  await t.rejects(startAdminServer(options(path)), /another process answers on the admin socket/);
  await new Promise<void>((resolve) => live.close(() => resolve()));

  const plain = join(d, 'file.sock');
  writeFileSync(plain, 'not a socket');
  await t.rejects(startAdminServer(options(plain)), /exists and is not a socket/);
});

t.test('GET /metrics serves the hook in Prometheus text format', async (t) => {
  const path = join(dir(t), 'svc.sock');
  const server = await startAdminServer(options(path, { metricsText: async () => '# TYPE up gauge\nup 1\n' }));
  t.teardown(() => server.close());
  const answer = await adminGet(path, '/metrics');
  t.equal(answer.status, 200);
  t.equal(answer.body, '# TYPE up gauge\nup 1\n');
});

t.test('close waits for a command in flight', async (t) => {
  const path = join(dir(t), 'svc.sock');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = await startAdminServer(
    options(path, {
      commands: {
        slow: async () => {
          await gate;
          return { exit_code: 0, stdout: 'done\n', stderr: '' };
        },
      },
    }),
  );
  const pending = runAdminCommand(path, 'slow', { values: {}, positionals: [] });
  await new Promise((r) => setTimeout(r, 100));
  let closed = false;
  const closing = server.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 100));
  t.notOk(closed, 'still closing while the command runs');
  release();
  t.same(await pending, { exit_code: 0, stdout: 'done\n', stderr: '' });
  await closing;
  t.ok(closed);
});

t.test('a socket path longer than a Unix address holds still binds and connects', async (t) => {
  const deep = join(dir(t), 'a-folder-name-long-enough-to-matter'.repeat(2), 'and-another-one-to-pass-107-bytes');
  mkdirSync(deep, { recursive: true });
  const path = join(deep, 'transit.duckdb.sock');
  t.ok(Buffer.byteLength(path) > 107, `${Buffer.byteLength(path)} bytes`);
  const server = await startAdminServer(options(path));
  t.ok(existsSync(path), 'the socket is where it was asked to be');
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.same(await pingAdmin(path), ping());
  await server.close();
  t.notOk(existsSync(path), 'and removed on close');
  t.equal(await pingAdmin(path), null);
});
