// One port, one server: a second `transit-api serve` on a port in use, by another serve or by
// any other program, exits non-zero at once with a message naming --port and TRANSIT_PORT,
// before it opens its database; the first server keeps every request.
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { runCli } from './support/cli.ts';
import { freePort } from './support/wait.ts';
import { silentLogger } from './support/logs.ts';

function configFile(dir: string, name: string): { file: string; db: string } {
  const db = join(dir, `${name}.duckdb`);
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      host: '127.0.0.1',
      db_path: db,
      exports: { enabled: false, dir: join(dir, `${name}-exports`) },
      snapshot: { enabled: false, path: join(dir, `${name}-snapshot.duckdb`) },
    }),
  );
  return { file, db };
}

const IN_USE = /could not listen on 127\.0\.0\.1:(\d+): the port is already in use[^\n]*--port <n>, TRANSIT_PORT/;

t.test('a second serve on the port of a running one exits non-zero', async (t) => {
  const dir = t.testdir();
  const service = await startService(
    parseConfig(
      {
        // a port given by number, as operators run it: uWS's default SO_REUSEPORT shares those
        host: '127.0.0.1',
        port: await freePort(),
        db_path: join(dir, 'first.duckdb'),
        exports: { enabled: false, dir: join(dir, 'exports') },
        snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
      },
      {},
    ),
    { log: silentLogger, poll: false },
  );
  t.teardown(() => service.close());
  const port = service.server.port;

  const second = configFile(dir, 'second');
  const run = await runCli(['serve', '--config', second.file, '--port', String(port)]);
  t.not(run.code, 0, 'exit code');
  t.equal(run.signal, null, 'it ended by itself');
  t.match(run.stderr, IN_USE);
  t.equal(IN_USE.exec(run.stderr)?.[1], String(port));
  t.notOk(existsSync(second.db), 'it failed before opening its database');
  t.notMatch(run.stdout, /listening/);

  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${service.url}/status.json`);
    t.equal(res.status, 200, 'the first server still answers every request');
  }
});

t.test('a port held by another program (TRANSIT_PORT) exits non-zero the same way', async (t) => {
  const dir = t.testdir();
  const other = createServer((socket) => socket.end('HTTP/1.1 418 I am not transit-api\r\n\r\n'));
  await new Promise<void>((resolve) => other.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const port = (other.address() as { port: number }).port;

  const config = configFile(dir, 'blocked');
  const run = await runCli(['serve', '--config', config.file], {
    env: { ...process.env, TRANSIT_CONFIG: '', TRANSIT_PORT: String(port) },
  });
  t.not(run.code, 0, 'exit code');
  t.match(run.stderr, IN_USE);
  t.equal(IN_USE.exec(run.stderr)?.[1], String(port));
  t.notOk(existsSync(config.db), 'it failed before opening its database');
});
