// The OpenAPI document against Redocly's `recommended` ruleset, run by Redocly's own engine
// (@redocly/openapi-core, what `redocly lint` runs), plus what Redocly does not check: a response
// example on every operation, valid against its schema, patterns that mean what they say in
// JavaScript, and the served /openapi.yaml byte for byte the committed docs/openapi.yaml.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { parse } from 'yaml';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { freePort } from './support/wait.ts';
import { silentLogger } from './support/logs.ts';

type Json = Record<string, unknown>;

const COMMITTED = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'openapi.yaml');
const text = readFileSync(COMMITTED, 'utf8');
const doc = parse(text) as Json;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Op {
  path: string;
  method: string;
  op: Json;
  where: string;
}
const ops: Op[] = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, op]) => ({ path, method, op: op as Json, where: `${method.toUpperCase()} ${path}` })),
);

/** Every node of the document with its JSON pointer. */
function* walk(node: unknown, pointer = ''): Generator<[string, Json]> {
  if (!node || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [pointer, node as Json];
  for (const [key, value] of Object.entries(node))
    yield* walk(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

t.test("Redocly's recommended ruleset finds nothing: 0 errors, 0 warnings", async (t) => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: text, absoluteRef: COMMITTED, config });
  t.same(
    problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`),
    [],
    'redocly lint (recommended) on docs/openapi.yaml',
  );
});

t.test('every pattern compiles as a JavaScript u-flag pattern; enumerated lists escape their dots', async (t) => {
  for (const [pointer, node] of walk(doc)) {
    if (typeof node.pattern === 'string')
      t.doesNotThrow(() => new RegExp(node.pattern as string, 'u'), `${pointer}: pattern compiles`);
  }
  const events = ops.find((o) => o.path === '/api/v1/events/stream')!;
  const types = ((events.op.parameters as Json[]).find((p) => p.name === 'types')!.schema as Json).pattern as string;
  const re = new RegExp(types, 'u');
  t.ok(re.test('alert.created,trip.canceled'), 'real types match');
  t.notOk(re.test('alertXcreated'), 'a dot is a dot (issue 15)');
  t.notOk(re.test('alert.created,feedXstale'));
});

t.test(
  'no-invalid-media-type-examples, no-invalid-schema-examples; a response example on every operation',
  async (t) => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (a: unknown) => void)(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: doc.components, paths: doc.paths } as Json);
    const check = (pointer: string, value: unknown, where: string) => {
      const validate = ajv.compile({ $ref: `openapi.json#${pointer}` });
      t.ok(validate(value), `${where}: example valid`, { errors: validate.errors?.slice(0, 3) });
    };
    for (const { path, method, op, where } of ops) {
      let examples = 0;
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries(((response as Json).content ?? {}) as Json)) {
          const m = media as Json;
          if (m.example === undefined) continue;
          examples++;
          const pointer =
            `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}` +
            `/content/${type.replace(/\//g, '~1')}/schema`;
          check(pointer, m.example, `${where} ${status} ${type}`);
        }
      }
      t.ok(examples > 0, `${where}: has a response example`);
      const ok = (op.responses as Json)['200'] ?? (op.responses as Json)['201'] ?? (op.responses as Json)['202'];
      const json = (((ok as Json | undefined)?.content ?? {}) as Json)['application/json'] as Json | undefined;
      if (json) t.not(json.example, undefined, `${where}: its JSON success body has an example`);
    }
    for (const [pointer, node] of walk(doc.components, '/components')) {
      if (node.example === undefined || pointer.includes('/headers/')) continue;
      if (!pointer.includes('/schemas/')) continue;
      check(pointer, node.example, `schema example at ${pointer}`);
    }
  },
);

t.test('the served /openapi.yaml is the committed file, byte for byte', async (t) => {
  const dir = t.testdir();
  const service = await startService(
    parseConfig({
      host: '127.0.0.1',
      port: await freePort(),
      db_path: join(dir, 'api.duckdb'),
      exports: { enabled: false, dir: join(dir, 'exports') },
      snapshot: { enabled: false, path: join(dir, 'snapshot.duckdb') },
    }),
    { log: silentLogger, poll: false },
  );
  t.teardown(() => service.close());
  const served = await (await fetch(`${service.url}/openapi.yaml`)).text();
  if (served === text) {
    t.pass('identical');
    return;
  }
  const a = served.split('\n');
  const b = text.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  t.fail(`the served document differs from docs/openapi.yaml at line ${line + 1}`, {
    served: a.slice(Math.max(0, line - 2), line + 3).join('\n'),
    committed: b.slice(Math.max(0, line - 2), line + 3).join('\n'),
  });
});
