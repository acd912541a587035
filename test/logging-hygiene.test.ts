// One logger: no console.* in production code. Diagnostics go through core/logger.ts (pino, on
// stderr); what a CLI command prints for its user goes through cli/output.ts. Test files, test
// doubles, child processes of tests and benches live under test/ and bench/, outside these folders.
import t from 'tap';
import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRODUCTION_FOLDERS } from './support/layers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PRODUCTION = [...PRODUCTION_FOLDERS, 'bin'];
// test support lives under test/support/ (test/architecture.test.ts keeps it there)
const NOT_PRODUCTION = [/\.test\.ts$/, /(^|\/)node_modules\//];

function sources(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // a folder another part of the project has not created yet
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|js|mjs|cjs)$/.test(e.name) ? [path] : [];
  });
}

t.test('no console.* in production folders', async (t) => {
  const files = PRODUCTION.flatMap((d) => sources(join(ROOT, d)))
    .map((f) => relative(ROOT, f))
    .filter((f) => !NOT_PRODUCTION.some((re) => re.test(f)));
  t.ok(files.length > 100, `${files.length} production files checked`);
  const found: string[] = [];
  for (const file of files) {
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\bconsole\.\w+/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  t.same(found, [], 'diagnostics go to the logger (core/logger.ts), command output to cli/output.ts');
});
