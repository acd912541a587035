// npm run build:binary: dist/transit-api, a Node single executable application (SEA) holding the
// bundled app, its native addons and the files it reads at run time. Built from the Node that
// runs this script, for this platform. See docs/guides/deploying.md.
//
//   node --import tsx scripts/build-binary.ts [--out <file>] [--no-strip]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { bundleApp } from '../binary/build/bundle.ts';
import { expandAssets, findNatives, scanAssetCalls } from '../binary/build/collect.ts';
import { MANIFEST_KEY, NATIVE_DIR, type ManifestEntry, type SeaManifest } from '../binary/manifest.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** Natives above this size are stored gzipped (libduckdb: 60 MB → about 20 MB). */
const COMPRESS_ABOVE_BYTES = 1024 * 1024;
/** Node's SEA fuse: postject flips it so the binary runs the embedded blob. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const { values } = parseArgs({ options: { out: { type: 'string' }, 'no-strip': { type: 'boolean' } } });
const output = resolve(values.out ?? join(repoRoot, 'dist', 'transit-api'));
const work = join(dirname(output), '.sea-build');
const started = performance.now();
const step = (what: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${what}`);

function checkNode(): void {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 12)) {
    throw new Error(`Node ${process.versions.node} cannot embed SEA assets; build with Node 20.12 or later`);
  }
}

/** strip(1) when present: debug symbols are a fifth of node and libduckdb and unused at run time. */
function strip(from: string, to: string): boolean {
  if (values['no-strip'] || process.platform !== 'linux') return false;
  const run = spawnSync('strip', ['--strip-unneeded', '-o', to, from], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.error || run.status !== 0) {
    console.log(
      `  strip unavailable or failed (${run.error?.message ?? run.stderr.toString().trim()}); kept ${from} as is`,
    );
    return false;
  }
  return true;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Writes the stored form of one embedded file under the work folder; returns its manifest entry. */
function stage(path: string, bytes: Buffer, assets: Record<string, string>): ManifestEntry {
  const encoding = path.startsWith(`${NATIVE_DIR}/`) && bytes.byteLength > COMPRESS_ABOVE_BYTES ? 'gzip' : 'raw';
  const stored = encoding === 'gzip' ? gzipSync(bytes, { level: 6 }) : bytes;
  const key = `tree/${path}`;
  const file = join(work, 'tree', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stored);
  assets[key] = file;
  return { key, path, bytes: bytes.byteLength, sha256: sha256(bytes), encoding };
}

async function main(): Promise<void> {
  checkNode();
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });

  const natives = findNatives(repoRoot);
  step(`bundling binary/entry.ts (natives: ${natives.files.map((f) => f.name).join(', ')})`);
  const bundleFile = join(work, 'main.cjs');
  const bundle = await bundleApp({
    repoRoot,
    entry: 'binary/entry.ts',
    outfile: bundleFile,
    natives: { uws: natives.uws.name, duckdb: natives.duckdb.name },
  });
  for (const warning of bundle.warnings) console.log(`  esbuild: ${warning}`);

  const scan = scanAssetCalls(repoRoot, bundle.inputs);
  if (scan.problems.length) throw new Error(scan.problems.join('\n'));
  const files = expandAssets(repoRoot, scan.paths);
  step(`embedding ${files.length} files for ${scan.paths.join(', ')}`);

  const assets: Record<string, string> = {};
  const entries = files.map((path) => stage(path, readFileSync(join(repoRoot, path)), assets));
  for (const native of natives.files) {
    const stripped = join(work, `stripped-${native.name}`);
    const source = native.name.endsWith('.node') || !strip(native.source, stripped) ? native.source : stripped;
    entries.push(stage(`${NATIVE_DIR}/${native.name}`, readFileSync(source), assets));
  }
  const id = sha256(Buffer.from(entries.map((e) => `${e.path}\0${e.sha256}`).join('\n'))).slice(0, 16);
  const manifest: SeaManifest = {
    name: pkg.name,
    version: pkg.version,
    id,
    platform: `${process.platform}-${process.arch}`,
    abi: process.versions.modules,
    entries,
    natives: { uws: natives.uws.name, duckdb: natives.duckdb.name },
  };
  writeFileSync(join(work, MANIFEST_KEY), JSON.stringify(manifest, null, 2));
  assets[MANIFEST_KEY] = join(work, MANIFEST_KEY);

  step('writing the SEA blob');
  const blob = join(work, 'sea-prep.blob');
  const seaConfig = join(work, 'sea-config.json');
  writeFileSync(
    seaConfig,
    JSON.stringify(
      {
        main: bundleFile,
        output: blob,
        disableExperimentalSEAWarning: true,
        useCodeCache: true,
        assets,
      },
      null,
      2,
    ),
  );
  const prep = spawnSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'inherit' });
  if (prep.status !== 0) throw new Error('node --experimental-sea-config failed');

  step(`injecting into a copy of ${process.execPath} (Node ${process.version})`);
  rmSync(output, { force: true });
  if (!strip(process.execPath, output)) copyFileSync(process.execPath, output);
  chmodSync(output, 0o755);
  const { inject } = createRequire(import.meta.url)('postject') as {
    inject(
      file: string,
      name: string,
      data: Buffer,
      options: { sentinelFuse: string; machoSegmentName?: string },
    ): Promise<void>;
  };
  await inject(output, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE, machoSegmentName: 'NODE_SEA' });

  const check = spawnSync(output, ['--version'], {
    encoding: 'utf8',
    env: { PATH: '', TRANSIT_CACHE_DIR: join(work, 'cache') },
  });
  if (check.status !== 0 || check.stdout.trim() !== pkg.version) {
    throw new Error(`the binary does not run: --version gave ${JSON.stringify(check.stdout + check.stderr)}`);
  }
  rmSync(work, { recursive: true, force: true });
  const mb = (statSync(output).size / 1024 / 1024).toFixed(1);
  step(`${output}: ${mb} MiB, ${pkg.name} ${pkg.version} (embedded files ${id}), checked with --version`);
}

main().catch((err: unknown) => {
  console.error(`build:binary failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
