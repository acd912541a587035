// The accounts' SQL lives in accounts/store.ts alone: the other modules of the folder generate,
// validate, shape and cache, and reach the database through it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const DIR = dirname(fileURLToPath(import.meta.url));
const SQL = new RegExp(
  String.raw`\b(SELECT\s|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|createAppender|\.append\(|db\.(all|run|` +
    String.raw`json|transaction)\()`,
);

t.test('no SQL in accounts/ outside store.ts', async (t) => {
  const modules = readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'store.ts');
  t.ok(modules.length > 5);
  for (const file of modules) {
    const lines = readFileSync(join(DIR, file), 'utf8').split('\n');
    const hits = lines
      .map((line, i) => [i + 1, line] as const)
      .filter(([, line]) => SQL.test(line) && !line.trim().startsWith('//'));
    t.same(
      hits.map(([n, line]) => `${file}:${n}: ${line.trim()}`),
      [],
      `${file} holds no SQL`,
    );
  }
});
