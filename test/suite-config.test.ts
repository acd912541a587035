// folders.json is the one list of the project's folders. What cannot read it (tsconfig.json,
// tsconfig.browser.json, .taprc) is checked against it here, and what reads it (the suite runner,
// the coverage sources) is checked to cover every folder: a new folder missing from one of them
// would have its tests skipped, its code left out of the coverage figure or of the type check,
// with nothing failing.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { projectFolders, testFiles } from '../scripts/test-bundles.mjs';
import { BROWSER_CODE, PRODUCTION_FOLDERS } from './support/layers.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const folders = projectFolders(root);

/** Every *.test.ts of the checkout, as tap's include glob finds them (no dot folders). */
function everyTestFile(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.') || e.name === 'node_modules' || e.name === 'dist') return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return everyTestFile(path);
    return e.name.endsWith('.test.ts') ? [relative(root, path).split(sep).join('/')] : [];
  });
}

t.test('the runner and the architecture test read the same folders', async (t) => {
  t.same(folders.production, PRODUCTION_FOLDERS, 'scripts/test-bundles.mjs and test/support/layers.ts');
  t.same(folders.browserCode, BROWSER_CODE);
  t.same(folders.tests, [...PRODUCTION_FOLDERS, 'test']);
});

t.test('npm test runs every test file of the checkout, and npx tap finds the same', async (t) => {
  const found = everyTestFile();
  t.ok(found.length > 100, `${found.length} test files`);
  t.same(testFiles(root), found.sort(), 'scripts/test-bundles.mjs: each test file lies in a folder of folders.json');
  const taprc = readFileSync(join(root, '.taprc'), 'utf8');
  const include = [...taprc.matchAll(/^include:\n((?:\s+-\s*".*"\n)+)/gm)][0]?.[1] ?? '';
  t.same(
    [...include.matchAll(/"([^"]+)"/g)].map((m) => m[1]),
    ['**/*.test.ts'],
    '.taprc includes every test file',
  );
});

t.test('scripts/test.mjs measures coverage over every production folder', async (t) => {
  const script = readFileSync(join(root, 'scripts', 'test.mjs'), 'utf8');
  t.match(script, /const SOURCES = \[`\{\$\{folders\.production\.join\(','\)\}\}\/\*\*\/\*\.ts`\];/);
  t.match(script, /\.\.\.folders\.browserCode\.map\(/, 'browser code left out (it runs in Chromium)');
});

t.test('tsconfig.json type-checks every production folder and the tests; the browser code has its own', async (t) => {
  const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
    include: string[];
    exclude: string[];
  };
  for (const folder of [...PRODUCTION_FOLDERS, 'test', 'bench', 'scripts', 'bin'])
    t.ok(tsconfig.include.includes(folder), `${folder} in tsconfig.json include`);
  const known = new Set([...PRODUCTION_FOLDERS, 'test', 'bench', 'scripts', 'bin', '*.ts']);
  t.same(
    tsconfig.include.filter((f) => !known.has(f)),
    [],
    'tsconfig.json includes no folder folders.json does not know',
  );
  for (const dir of BROWSER_CODE) t.ok(tsconfig.exclude.includes(dir), `${dir} excluded from tsconfig.json`);
  const browser = JSON.parse(readFileSync(join(root, 'tsconfig.browser.json'), 'utf8')) as { include: string[] };
  t.same(browser.include, [...BROWSER_CODE], 'tsconfig.browser.json checks the browser code of folders.json');
});
