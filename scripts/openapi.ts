// npm run openapi: regenerates the committed docs/openapi.yaml from the route table.
// CI runs the drift test (test/openapi-drift.test.ts), which fails when this was not rerun.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { documentedOpenApi } from '../app/catalog.ts';
import { toYaml } from '../docs/openapi.ts';

const target = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'openapi.yaml');
const doc = documentedOpenApi('/');
writeFileSync(target, toYaml(doc));
const paths = Object.keys((doc.paths ?? {}) as object).length;
console.log(`wrote ${target} (${paths} paths)`);
