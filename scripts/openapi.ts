// npm run openapi: regenerates the committed http/openapi.yaml from the route table.
// CI runs the drift test (test/openapi-drift.test.ts), which fails when this was not rerun.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { documentedApp } from '../http/catalog.ts';
import { toYaml } from '../http/openapi.ts';

const target = join(dirname(fileURLToPath(import.meta.url)), '..', 'http', 'openapi.yaml');
const app = documentedApp();
writeFileSync(target, toYaml(app.openapi('/')));
const paths = Object.keys((app.openapi('/').paths ?? {}) as object).length;
console.log(`wrote ${target} (${paths} paths)`);
