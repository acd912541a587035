// The folder graph is the data flow (folders.json through test/support/layers.ts; the
// architecture guide, "Import direction"): this reads the imports of every .ts file and fails
// with one `file:line: …` line per import that runs against the flow, per folder cycle, per piece
// of test support left in a production folder, and per uWebSockets.js import outside
// http/server.ts. It also holds docs/guides/architecture.md to the tree: its folder table, its
// tier table and its "Where to find" list.
import { type Dirent, existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import ts from 'typescript';
import { exportUsers } from './support/export-users.ts';
import { ENTRY_POINTS, LAYERS, NOT_PRODUCTION, PRODUCTION_FOLDERS } from './support/layers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = /\.(ts|mts|cts)$/;
const isTest = (file: string) => file.endsWith('.test.ts') || file.startsWith('test/');
// devDependencies production code may import: the build (binary/build/, the browser bundles), never the running service
const BUILD_TOOLS = ['esbuild', 'postject', 'typescript'];

// Names that mean "exists for the tests": folders and files.
const SUPPORT_FOLDER = /(^|\/)(tests?|testing|testdata|__tests__|__mocks__|fakes|mocks|bench|benches)\//;
const SUPPORT_FILE = new RegExp(
  String.raw`(^|\/)(tests?[-_][^/]*|[^/]*[-_](support|harness|fakes?|mocks?|stubs?|child)\.[cm]?ts|fault-server` +
    String.raw`\.ts|(fake|mock|stub)[-_][^/]*)$`,
);

function walk(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  } catch {
    return []; // a folder of the table that no one has created yet
  }
  return entries.flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : walk(path);
    return SOURCE.test(e.name) ? [path] : [];
  });
}

interface Import {
  from: string;
  line: number;
  spec: string;
  target: string | null;
}

/** `target`: the repository path a relative import names (null for packages and node: builtins). */
function importsOf(file: string, text: string): Import[] {
  const info = ts.preProcessFile(text, true, true);
  const lineOf = (pos: number) => text.slice(0, pos).split('\n').length;
  return info.importedFiles.map(({ fileName: spec, pos }) => ({
    from: file,
    line: lineOf(pos),
    spec,
    target: spec.startsWith('.') ? resolveImport(file, spec) : null,
  }));
}

function resolveImport(file: string, spec: string): string {
  const path = posix.normalize(posix.join(posix.dirname(file), spec));
  if (SOURCE.test(path)) return path;
  if (/\.[cm]?js$/.test(path) && existsSync(join(ROOT, path.replace(/js$/, 'ts')))) return path.replace(/js$/, 'ts');
  if (existsSync(join(ROOT, `${path}.ts`))) return `${path}.ts`;
  if (existsSync(join(ROOT, path, 'index.ts'))) return posix.join(path, 'index.ts');
  return path;
}

const topFolder = (path: string) => (path.startsWith('../') ? '..' : path.split('/')[0]!);
const tierOf = new Map(LAYERS.flatMap((tier, i) => tier.folders.map((f) => [f, i] as const)));

const topLevel = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !NOT_PRODUCTION.includes(e.name))
  .map((e) => e.name);
const productionFiles = PRODUCTION_FOLDERS.flatMap(walk);
const otherFiles = NOT_PRODUCTION.filter((d) => d !== 'node_modules').flatMap(walk);
const texts = new Map([...productionFiles, ...otherFiles].map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
const imports = [...texts].flatMap(([file, text]) => importsOf(file, text));
const productionImports = imports.filter((i) => !isTest(i.from) && tierOf.has(topFolder(i.from)));

function report(t: Test, violations: string[], what: string): void {
  for (const v of violations) t.fail(v);
  if (violations.length === 0) t.pass(`no ${what}`);
  else t.comment(`${violations.length} ${what}:\n${violations.join('\n')}`);
}

t.test('the check reads the code', async (t) => {
  t.ok(productionFiles.length > 150, `${productionFiles.length} production files`);
  t.ok(productionImports.length > 1000, `${productionImports.length} imports in production files`);
});

t.test('every top-level source folder has a place in the layer table', async (t) => {
  const unplaced = topLevel.filter((d) => !tierOf.has(d) && walk(d).length > 0);
  report(
    t,
    unplaced.map((d) => `${d}/: not in the layer table (folders.json and docs/guides/architecture.md)`),
    'unplaced folders',
  );
});

t.test('imports run with the flow: to a lower tier, or to a sibling of the same tier where allowed', async (t) => {
  const violations: string[] = [];
  for (const i of productionImports) {
    if (i.target === null) continue;
    const from = topFolder(i.from);
    const to = topFolder(i.target);
    if (from === to) continue;
    const where = `${i.from}:${i.line}: imports ${i.spec}`;
    if (!tierOf.has(to)) {
      violations.push(`${where}: ${to}/ is not production code (test support belongs to tests)`);
      continue;
    }
    if (i.target.endsWith('.test.ts')) {
      violations.push(`${where}: a test file`);
      continue;
    }
    const a = tierOf.get(from)!;
    const b = tierOf.get(to)!;
    if (b > a) violations.push(`${where}: ${from}/ (tier ${a}) must not import ${to}/ (tier ${b}), against the flow`);
    else if (b === a && !LAYERS[a]!.siblings)
      violations.push(`${where}: ${from}/ and ${to}/ share tier ${a}, which allows no imports between them`);
  }
  report(t, violations, 'imports against the flow');
});

t.test('folders of one tier import each other without a cycle', async (t) => {
  // the first import of each same-tier edge, to name it
  const edges = new Map<string, Map<string, Import>>();
  for (const i of productionImports) {
    if (i.target === null) continue;
    const from = topFolder(i.from);
    const to = topFolder(i.target);
    if (from === to || tierOf.get(from) !== tierOf.get(to)) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from)!.has(to)) edges.get(from)!.set(to, i);
  }
  const reaches = (a: string, b: string, seen = new Set<string>()): boolean => {
    if (a === b) return true;
    seen.add(a);
    return [...(edges.get(a)?.keys() ?? [])].some((n) => !seen.has(n) && reaches(n, b, seen));
  };
  const violations: string[] = [];
  for (const [from, tos] of edges) {
    for (const [to, i] of tos) {
      if (reaches(to, from))
        violations.push(
          `${i.from}:${i.line}: imports ${i.spec}: ${from}/ → ${to}/ closes a cycle (${to}/ already reaches ${from}/)`,
        );
    }
  }
  report(t, violations.sort(), 'folder cycles');
});

t.test('no test support in production folders', async (t) => {
  const named = productionFiles.filter(
    (f) => !f.endsWith('.test.ts') && (SUPPORT_FOLDER.test(f) || SUPPORT_FILE.test(f)),
  );
  report(
    t,
    named.map((f) => `${f}:1: named as test support: move it under test/support/`),
    'test support names',
  );

  // a module only tests import is test support or not wired yet: listed, not failed, since a
  // folder in progress (wired in a later step) passes through that state
  const importers = new Map<string, Set<string>>();
  for (const i of imports) {
    if (i.target === null) continue;
    if (!importers.has(i.target)) importers.set(i.target, new Set());
    importers.get(i.target)!.add(i.from);
  }
  const outside = [
    readFileSync(join(ROOT, 'package.json'), 'utf8'),
    ...[...texts].filter(([f]) => !isTest(f)).map(([, text]) => text),
  ].join('\n');
  const onlyTests = productionFiles.filter((f) => {
    if (f.endsWith('.test.ts')) return false;
    const by = [...(importers.get(f) ?? [])];
    return by.length > 0 && by.every(isTest) && !outside.includes(posix.basename(f));
  });
  for (const f of onlyTests)
    t.comment(
      `note: ${f} is imported only by tests (${[...importers.get(f)!].sort().join(', ')}): wire it, or move it ` +
        `under test/support/`,
    );
});

// An export of production code that production never uses (neither its own file, nor another
// production file, nor bench/ or scripts/) but tests import exists for the tests: it belongs in
// test/support/. A function production runs and a unit test also calls directly is fine.
t.test('no production export exists only for tests', async (t) => {
  const users = exportUsers(ROOT, [...texts.keys()]);
  const violations: string[] = [];
  const unused: string[] = [];
  for (const [e, by] of users) {
    if (isTest(e.file) || !tierOf.has(topFolder(e.file)) || ENTRY_POINTS.includes(e.file) || e.usedInFile) continue;
    const importers = [...by].sort();
    if (importers.length === 0) unused.push(`${e.file}:${e.line}: ${e.name}`);
    else if (importers.every(isTest))
      violations.push(
        `${e.file}:${e.line}: ${e.name} is used only by ${importers.join(', ')}: move it under ` +
          `test/support/, or un-export it`,
      );
  }
  t.ok(users.size > 1000, `${users.size} exports read`);
  report(t, violations, 'exports only tests use');
  if (unused.length) t.comment(`note: exported, used nowhere (dead code, or not wired yet):\n${unused.join('\n')}`);
});

t.test('production code imports only runtime dependencies (and build tools where it builds)', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const builtins = new Set(builtinModules);
  const packageOf = (spec: string) =>
    spec
      .split('/')
      .slice(0, spec.startsWith('@') ? 2 : 1)
      .join('/');
  const violations: string[] = [];
  for (const i of productionImports) {
    if (i.target !== null || i.spec.startsWith('node:') || builtins.has(i.spec) || builtins.has(packageOf(i.spec)))
      continue;
    const name = packageOf(i.spec);
    if (name in pkg.dependencies) continue;
    if (name in pkg.devDependencies && BUILD_TOOLS.includes(name)) continue;
    violations.push(
      `${i.from}:${i.line}: imports ${i.spec}: ` +
        `${
          name in pkg.devDependencies
            ? 'a devDependency (tests only), absent from an npm ci --omit=dev install'
            : 'not a declared ' + 'dependency'
        }`,
    );
  }
  report(t, violations, 'imports of test-only or undeclared packages');
});

t.test('only http/server.ts imports uWebSockets.js', async (t) => {
  const violations = imports
    .filter((i) => i.spec === 'uWebSockets.js' && i.from !== 'http/server.ts' && tierOf.has(topFolder(i.from)))
    .map((i) => `${i.from}:${i.line}: imports uWebSockets.js: only http/server.ts may`);
  report(t, violations, 'other uWebSockets.js imports');
});

const GUIDE = 'docs/guides/architecture.md';
const guide = readFileSync(join(ROOT, GUIDE), 'utf8');
/** The text of a `## title` section of the guide, up to the next heading of that level. */
const section = (title: string) => guide.split(new RegExp(`^## ${title}\\s*$`, 'm'))[1]?.split(/^## /m)[0] ?? '';
/** A table's rows as cells, header and separator left out. */
const rows = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

t.test(`${GUIDE} shows the tiers the check enforces`, async (t) => {
  const table = rows(section('Import direction')).map(([tier, folders, note]) => ({
    tier: Number(tier),
    folders: ticked(folders ?? '').map((f) => f.replace(/\/$/, '')),
    note,
  }));
  t.strictSame(
    table,
    LAYERS.map((tier, i) => ({ tier: i, folders: [...tier.folders], note: tier.note })),
    `"Import direction" lists the tiers of folders.json`,
  );
});

t.test(`${GUIDE} names every folder of the tree, and only those`, async (t) => {
  const listed = rows(guide.split(/^## /m)[0]!).map(([folder]) => ticked(folder ?? '')[0]?.replace(/\/$/, ''));
  const tree = readdirSync(ROOT, { withFileTypes: true })
    .filter(
      (e) =>
        e.isDirectory() && !e.name.startsWith('.') && !['node_modules', 'dist', 'data', 'coverage'].includes(e.name),
    )
    .map((e) => e.name)
    .filter((d) => hasCode(d));
  t.same([...listed].sort(), [...tree].sort(), 'the folder table lists the top-level folders that hold code');
  for (const folder of PRODUCTION_FOLDERS) t.ok(listed.includes(folder), `${folder}/ (folders.json) is in the table`);
});

/** A folder holding source files (a folder of generated output holds none). */
function hasCode(dir: string): boolean {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).some((e) =>
    e.isDirectory()
      ? e.name !== 'node_modules' && !e.name.startsWith('.') && hasCode(posix.join(dir, e.name))
      : /\.(ts|mts|mjs|js)$/.test(e.name),
  );
}

/** The symbol is declared in the file: a function, class, constant, type; `Class.method` a method of the class. */
function declares(text: string, symbol: string): boolean {
  const [owner, member] = symbol.includes('.') ? symbol.split('.') : [null, symbol];
  const esc = (s: string) => s.replace(/[$]/g, '\\$');
  if (owner !== null) {
    const at = text.search(new RegExp(`\\bclass\\s+${esc(owner)}\\b`));
    if (at < 0) return false;
    const method = new RegExp(
      `^\\s+(?:(?:public|private|protected|static|async|readonly|get|set)\\s+)*${esc(member!)}\\s*[(<]`,
      'm',
    );
    return method.test(text.slice(at));
  }
  return new RegExp(`\\b(?:function\\*?|class|const|let|var|interface|type|enum)\\s+${esc(member!)}\\b`).test(text);
}

t.test(`${GUIDE} "Where to find": every path exists and holds its symbol`, async (t) => {
  const list = rows(section('Where to find'));
  t.ok(list.length >= 10, `${list.length} places listed`);
  for (const [what, where, symbol] of list) {
    const path = ticked(where ?? '')[0]!;
    const name = ticked(symbol ?? '')[0]!;
    if (!existsSync(join(ROOT, path))) {
      t.fail(`${what}: ${path} does not exist`);
      continue;
    }
    const text = readFileSync(join(ROOT, path), 'utf8');
    const found = SOURCE.test(path) ? declares(text, name) : text.includes(name);
    t.ok(found, `${what}: ${path} ${SOURCE.test(path) ? 'declares' : 'contains'} ${name}`);
  }
  for (const required of [
    'trip is matched',
    'rate window is enforced, in memory',
    'rate window is enforced, in Redis',
    'SSE frame is written to a socket',
    'webhook is signed',
    "rollup's SQL lives",
    'admin command is dispatched',
  ])
    t.ok(
      list.some(([what]) => what!.includes(required)),
      `the list says where a ${required}`,
    );
});
