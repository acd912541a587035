import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { expandAssets, findNatives, scanAssetCalls } from './collect.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function tree(t: { teardown(fn: () => void): void }, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'sea-collect-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

t.test('asset paths are the string literals passed to assetPath', async (t) => {
  const root = tree(t, {
    'a.ts':
      `const X = assetPath('store/migrations');\nconst Y = assetPath( "pipeline/x.proto" ` +
      `);\nassetPath('store/migrations');`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text with a template literal, as the scan reads it
    'b.ts': 'const dir = assetPath(`sql/${name}`);\nconst d2 = assetPath(name);',
    'core/assets.ts': 'export function assetPath(relative: string): string {}',
    'node_modules/pkg/index.js': 'assetPath(whatever)',
  });
  const scan = scanAssetCalls(root, ['a.ts', 'b.ts', 'core/assets.ts', 'node_modules/pkg/index.js']);
  t.same(scan.paths, ['pipeline/x.proto', 'store/migrations']);
  t.same(scan.problems, [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the message quotes that source text
    'b.ts: assetPath(`sql/${name}`) must name its file with a string literal',
    'b.ts: assetPath(name) must name its file with a string literal',
  ]);
});

t.test('folders expand to every file under them', async (t) => {
  const root = tree(t, {
    'store/migrations/001_a.sql': '1',
    'store/migrations/002_b.sql': '2',
    'store/migrations/deep/x.sql': '3',
    'package.json': '{}',
  });
  t.same(expandAssets(root, ['store/migrations', 'package.json']), [
    'package.json',
    'store/migrations/001_a.sql',
    'store/migrations/002_b.sql',
    'store/migrations/deep/x.sql',
  ]);
  t.throws(
    () => expandAssets(root, ['http/status.html']),
    /assetPath\('http\/status.html'\) names a file that does not exist/,
  );
});

t.test('the repository names its assets with literals only', async (t) => {
  const sources = [
    'cli/main.ts',
    'store/db.ts',
    'store/reliability/sql.ts',
    'pipeline/decode.ts',
    'fixtures/rt-codec.ts',
  ];
  const scan = scanAssetCalls(repoRoot, sources);
  t.same(scan.problems, []);
  t.ok(scan.paths.includes('store/migrations') && scan.paths.includes('pipeline/gtfs-realtime.proto'));
  t.ok(expandAssets(repoRoot, scan.paths).includes('store/migrations/001_init.sql'));
});

t.test('the natives are the files the packages load for this Node', async (t) => {
  const natives = findNatives(repoRoot);
  t.equal(natives.uws.name, `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  t.match(natives.uws.source, /uWebSockets\.js[\\/]binaries[\\/]/);
  t.equal(natives.duckdb.name, 'duckdb.node');
  if (process.platform === 'linux')
    t.ok(
      natives.files.some((f) => f.name === 'libduckdb.so'),
      'libduckdb.so travels with duckdb.node',
    );
  for (const file of natives.files) t.ok(existsSync(file.source), basename(file.source));
});
