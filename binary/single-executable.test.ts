// The single executable, end to end: built from this checkout, copied alone into an empty folder
// and run with an environment that has no Node, no node_modules and no tools. TRANSIT_BINARY
// points the test at an already built binary instead of building one (about 15 s of CPU).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { type SseEvent, type SseParts, sseParser } from '../test/support/sse-parse.ts';
import { feedMessageType } from '../fixtures/rt-codec.ts';
import { demoNetworkDir } from '../fixtures/demo-network.ts';

// Building is most of this file's time (about 15 s alone, up to a minute on a loaded 2-core machine).
t.setTimeout(300_000);

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'transit-binary-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

const run = join(work, 'run');
const emptyBin = join(work, 'empty-bin');
mkdirSync(run);
mkdirSync(emptyBin);
const binary = join(run, 'transit-api');
/** what `env -i PATH=<empty> HOME=<run>` gives: nothing inherited, no node reachable */
const env = { PATH: emptyBin, HOME: run, TMPDIR: run };

interface SseRead {
  status: number;
  contentType: string;
  retry?: number;
  events: SseEvent[];
}

/** Reads a text/event-stream with eventsource-parser, until `events` events or the timeout. */
async function readSseEvents(
  url: string,
  headers: Record<string, string>,
  until: { events: number; timeoutMs: number },
): Promise<SseRead> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), until.timeoutMs);
  try {
    const res = await fetch(url, { headers: { ...headers, Accept: 'text/event-stream' }, signal: abort.signal });
    const read: SseRead = { status: res.status, contentType: res.headers.get('content-type') ?? '', events: [] };
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      return read;
    }
    const decoder = new TextDecoder();
    const parts: SseParts = { events: read.events, comments: [], retry: null };
    const parser = sseParser(parts);
    try {
      for await (const chunk of res.body) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        if (parts.retry !== null) read.retry = parts.retry;
        if (read.events.length >= until.events) break;
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    return read;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function build(): Promise<string> {
  if (process.env.TRANSIT_BINARY) return resolve(process.env.TRANSIT_BINARY);
  const out = join(work, 'build', 'transit-api');
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/build-binary.ts', '--out', out], {
    cwd: repoRoot,
  });
  let log = '';
  child.stdout.on('data', (c) => {
    log += c;
  });
  child.stderr.on('data', (c) => {
    log += c;
  });
  const code = await new Promise<number | null>((done) => child.on('close', done));
  if (code !== 0) throw new Error(`build:binary exited ${code}:\n${log}`);
  return out;
}

function cli(args: string[], extraEnv: Record<string, string> = {}) {
  const r = spawnSync(binary, args, { cwd: run, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Resolves once `serve` has printed its URL and demo keys; rejects if it exits first. */
function started(child: ChildProcess, output: { text: string }): Promise<void> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start within 90 s:\n${output.text}`)), 90_000);
    child.stdout!.on('data', () => {
      if (/try: curl/.test(output.text)) {
        clearTimeout(timer);
        done();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`serve exited ${code} before it was ready:\n${output.text}`));
    });
  });
}

t.test('the binary runs alone: no Node, no node_modules', async (t) => {
  const built = await build();
  copyFileSync(built, binary);
  chmodSync(binary, 0o755);

  t.ok(spawnSync('node', ['--version'], { env }).error, 'node is not reachable on this PATH');
  for (let dir = run; dir !== dirname(dir); dir = dirname(dir)) {
    t.notOk(existsSync(join(dir, 'node_modules')), `no node_modules in ${dir}`);
  }
  if (!process.env.TRANSIT_BINARY) {
    t.notOk(readFileSync(binary).includes(repoRoot), 'the binary names no path of the checkout');
  }
  t.same(cli(['--version']), { code: 0, out: `${pkg.version}\n`, err: '' });
});

t.test('serve --demo: REST, event stream, clean stop on SIGTERM', async (t) => {
  const output = { text: '' };
  const child = spawn(binary, ['serve', '--demo', '--port', '0'], { cwd: run, env });
  child.stdout.on('data', (c) => {
    output.text += c;
  });
  child.stderr.on('data', (c) => {
    output.text += c;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.on('exit', (code, signal) => done({ code, signal }));
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await started(child, output);

  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.text)?.[1];
  const key = /regular\s+live\s+(tk_live_\w+)/.exec(output.text)?.[1];
  t.ok(url && key, 'prints its URL and the demo keys');
  const auth = { Authorization: `Bearer ${key}` };

  t.equal((await fetch(`${url}/api/v1/alerts`)).status, 401, 'no key, no data');
  const alerts = await fetch(`${url}/api/v1/alerts`, { headers: auth });
  t.equal(alerts.status, 200);
  t.equal(alerts.headers.get('uwebsockets'), '20', 'served by the native uWebSockets.js');
  t.ok(Array.isArray(((await alerts.json()) as { data: unknown }).data), 'a page of alerts');

  const stream = await readSseEvents(`${url}/api/v1/events/stream`, auth, { events: 2, timeoutMs: 30_000 });
  t.equal(stream.status, 200);
  t.match(stream.contentType, /^text\/event-stream/);
  t.ok(stream.retry !== undefined, 'tells the client its reconnection delay');
  t.ok(stream.events.length >= 2, `events arrived (${stream.events.length})`);
  const isJson = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  const bad = stream.events.filter((e) => !/^[a-z]+(\.[a-z_]+)+$/.test(e.event) || !isJson(e.data));
  const types = [...new Set(stream.events.map((e) => e.event))].join(', ');
  t.same(bad, [], `every event has a dotted type and JSON data (${types})`);
  const ids = stream.events.map((e) => e.id ?? '');
  const increasing = ids.every((id, i) => /^\d+$/.test(id) && (i === 0 || BigInt(id) > BigInt(ids[i - 1]!)));
  t.ok(increasing, `ids increase: ${ids[0]} … ${ids.at(-1)}`);

  child.kill('SIGTERM');
  t.same(await exited, { code: 0, signal: null }, 'exits 0 after SIGTERM');
  t.match(
    output.text,
    /"signal":"SIGTERM","msg":"finishing in-flight requests/,
    'the shutdown is logged (JSON lines off a TTY)',
  );
});

t.test('import-gtfs, keys and ingest --once run from the binary', async (t) => {
  const gtfs = join(demoNetworkDir(join(run, 'transit-api-demo')), 'gtfs.zip');
  t.ok(existsSync(gtfs), 'the demo network written by serve --demo');
  const db = { TRANSIT_DB: join(run, 'ops.duckdb') };

  const imported = cli(['import-gtfs', gtfs, '--id', 'demo'], db);
  t.equal(imported.code, 0, imported.err);
  t.match(imported.out, /imported schedule demo/);

  const created = cli(['keys', 'create', '--plan', 'regular', '--name', 'ops'], db);
  t.equal(created.code, 0, created.err);
  t.match(created.out, /tk_live_\w+/, 'prints the new key');
  const id = /created (\S+)/.exec(created.out)?.[1] ?? '';
  t.match(cli(['keys', 'list'], db).out, new RegExp(`${id}.*ops`));
  const revoked = cli(['keys', 'revoke', id], db);
  t.equal(revoked.code, 0, revoked.out + revoked.err);
  t.match(revoked.out, `revoked ${id}`);

  const now = Math.floor(Date.now() / 1000);
  const feedFile = join(run, 'vehicles.pb');
  const type = feedMessageType();
  writeFileSync(
    feedFile,
    type
      .encode(
        type.fromObject({
          header: { gtfs_realtime_version: '2.0', timestamp: now },
          entity: [
            {
              id: 'v1',
              vehicle: { vehicle: { id: 'bus-1' }, position: { latitude: 37.77, longitude: -122.42 }, timestamp: now },
            },
          ],
        }),
      )
      .finish(),
  );
  const config = join(run, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      db_path: db.TRANSIT_DB,
      schedules: [{ id: 'demo', source: gtfs }],
      feeds: [{ id: 'local', kind: 'gtfs-rt', url: `file://${feedFile}`, schedule_id: 'demo' }],
    }),
  );
  const ingested = cli(['ingest', '--once', '--json', '--config', config]);
  t.equal(ingested.code, 0, ingested.out + ingested.err);
  const poll = JSON.parse(ingested.out.trim().split('\n').pop()!) as { feed_id: string; entities: number };
  t.match(poll, { feed_id: 'local', entities: 1 });
});
