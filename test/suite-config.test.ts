// The suite runs the tests of every production folder and measures their coverage: a new room
// missing from .taprc's include or from scripts/test.mjs's SOURCES would have its tests skipped
// or its code left out of the coverage figure, with nothing failing.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRODUCTION_FOLDERS } from './support/layers.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

t.test('.taprc includes the tests of every production folder and of test/', async (t) => {
  const taprc = readFileSync(join(root, '.taprc'), 'utf8');
  const included = new Set([...taprc.matchAll(/^\s*-\s*"([a-z-]+)\/\*\*\/\*\.test\.ts"/gm)].map((m) => m[1]));
  for (const folder of [...PRODUCTION_FOLDERS, 'test'])
    t.ok(included.has(folder), `${folder}/**/*.test.ts in .taprc include`);
});

t.test('scripts/test.mjs measures coverage over every production folder', async (t) => {
  const script = readFileSync(join(root, 'scripts', 'test.mjs'), 'utf8');
  const braces = /const SOURCES = \[\s*'\{([^}]+)\}\/\*\*\/\*\.ts',?\s*\]/.exec(script);
  t.ok(braces, 'SOURCES is one brace list');
  const sources = new Set((braces?.[1] ?? '').split(','));
  for (const folder of PRODUCTION_FOLDERS) t.ok(sources.has(folder), `${folder} in SOURCES`);
});

t.test('tsconfig.json type-checks every production folder and the tests', async (t) => {
  const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as { include: string[] };
  for (const folder of [...PRODUCTION_FOLDERS, 'test', 'bench', 'scripts'])
    t.ok(tsconfig.include.includes(folder), `${folder} in tsconfig include`);
});
