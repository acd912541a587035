// The committed docs/openapi.yaml must be exactly what the route table generates (CI fails
// otherwise: run `npm run openapi`), and every operation the server serves must be in it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { documentedOpenApi } from '../app/catalog.ts';
import { toYaml } from '../docs/openapi.ts';
import { startHarness } from './support/harness.ts';

const COMMITTED = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'openapi.yaml');

t.test('the committed OpenAPI document matches the route table', async (t) => {
  const generated = toYaml(documentedOpenApi('/'));
  const committed = readFileSync(COMMITTED, 'utf8');
  if (generated !== committed) {
    const a = generated.split('\n');
    const b = committed.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    t.fail(
      `docs/openapi.yaml is out of date (first difference at line ${line + 1}); run \`npm run openapi\` and ` +
        `commit the result`,
      {
        generated: a.slice(Math.max(0, line - 2), line + 3).join('\n'),
        committed: b.slice(Math.max(0, line - 2), line + 3).join('\n'),
      },
    );
  } else {
    t.pass('identical');
  }
});

t.test('every operation the server serves is in the committed document', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const served = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const committed = parse(readFileSync(COMMITTED, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  for (const [path, item] of Object.entries(served.paths)) {
    for (const method of Object.keys(item)) {
      t.same(committed.paths[path]?.[method], item[method], `${method.toUpperCase()} ${path}`);
    }
  }
});
