// The built runtime as `npm start` and `npx transit-api` run it: bin/transit-api.js → dist/
// (made here first when missing or older than a source). It runs from a tree that holds only
// what the build says a checkout must provide: the bin, the bundle, package.json, the files the
// app reads, and node_modules with nothing but the native packages. No tsx and no TypeScript
// can be reached from there, so a module the bundle left out, or an asset the build does not
// know of, fails here.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { NATIVE_PACKAGES } from '../binary/build/bundle.ts';
import { ensureRuntimeBuilt, readBuildInfo, RUNTIME_BUNDLE } from '../binary/build/runtime.ts';
import { childEnv, REPO_ROOT, runNode } from './support/cli.ts';
import { freePort } from './support/wait.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

/** The native packages, and the per-platform packages they load their addon from. */
function nativeDirs(): string[] {
  const dirs: string[] = [];
  for (const name of NATIVE_PACKAGES) {
    dirs.push(name);
    const manifest = join(REPO_ROOT, 'node_modules', name, 'package.json');
    const { optionalDependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      optionalDependencies?: Record<string, string>;
    };
    dirs.push(
      ...Object.keys(optionalDependencies).filter(
        (dep) => dep.startsWith(name) && existsSync(join(REPO_ROOT, 'node_modules', dep)),
      ),
    );
  }
  return dirs;
}

function assembleTree(root: string): string[] {
  const info = readBuildInfo(REPO_ROOT);
  for (const file of ['bin/transit-api.js', RUNTIME_BUNDLE, 'package.json', ...info.assetFiles]) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(root, file));
  }
  const natives = nativeDirs();
  for (const name of natives) {
    mkdirSync(dirname(join(root, 'node_modules', name)), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules', name), join(root, 'node_modules', name), 'dir');
  }
  return natives;
}

async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(await check())) {
    if (child.exitCode !== null) throw new Error(`transit-api exited (${child.exitCode}) before ${what}:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test('bin/transit-api.js runs the build from a tree with only the native packages', async (t) => {
  const rebuilt = await ensureRuntimeBuilt(REPO_ROOT);
  t.comment(rebuilt ? `built ${RUNTIME_BUNDLE} first: ${rebuilt}` : `${RUNTIME_BUNDLE} was up to date`);
  // outside the repository: from a folder inside it, node would find the repository's node_modules
  const dir = mkdtempSync(join(tmpdir(), 'transit-built-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'checkout');
  const natives = assembleTree(root);
  t.comment(`node_modules: ${natives.join(', ')}`);
  const bin = join(root, 'bin', 'transit-api.js');

  const version = await runNode([bin, '--version'], { cwd: dir });
  t.equal(version.code, 0, version.stderr);
  t.equal(version.stdout.trim(), pkg.version);

  const port = await freePort();
  const child = spawn(process.execPath, [bin, 'serve', '--demo', '--port', String(port)], {
    cwd: dir,
    env: childEnv({ TRANSIT_DEMO_DIR: join(dir, 'demo'), TRANSIT_DB: '' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    '/status.json',
    async () => (await fetch(`${base}/status.json`).catch(() => null))?.ok ?? false,
    child,
    () => out,
  );
  await waitFor(
    'the demo keys',
    () => /^\s*max\s+live\s+tk_live_\S+/m.test(out),
    child,
    () => out,
  );
  const key = /^\s*max\s+live\s+(tk_live_\S+)/m.exec(out)![1]!;

  const alerts = await fetch(`${base}/api/v1/alerts`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(alerts.status, 200, 'an API request with a printed demo key');
  t.ok(Array.isArray(((await alerts.json()) as { data: unknown }).data));
  const openapi = await fetch(`${base}/openapi.yaml`);
  t.equal(openapi.status, 200);
  t.match(await openapi.text(), /^openapi: 3\.1/m);
  for (const page of ['/docs', '/dashboard', '/status']) {
    const res = await fetch(`${base}${page}`);
    t.equal(res.status, 200, page);
    t.match(res.headers.get('content-type') ?? '', /text\/html/, page);
    await res.arrayBuffer();
  }
  const controller = new AbortController();
  const stream = await fetch(`${base}/api/v1/events/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  t.equal(stream.status, 200);
  t.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
  controller.abort();

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM ends it cleanly');
});

t.test('without a build, the bin says how to make one', async (t) => {
  const dir = t.testdir();
  mkdirSync(join(dir, 'bin'));
  cpSync(join(REPO_ROOT, 'bin', 'transit-api.js'), join(dir, 'bin', 'transit-api.js'));
  const run = await runNode([join(dir, 'bin', 'transit-api.js'), '--version'], { cwd: dir });
  t.equal(run.code, 1);
  t.match(run.stderr, /dist\/transit-api\.cjs is missing: run `npm run build`/);
});
