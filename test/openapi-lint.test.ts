// The OpenAPI document against the rules of Redocly's `recommended` ruleset that a document like
// ours can break (the CLI is not a dependency; these are its rule names), plus what issue 15 asks:
// a response example on every operation, valid against its schema, patterns that mean what they
// say, and the served /openapi.yaml byte for byte the committed docs/openapi.yaml.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import t from 'tap';
import { parse } from 'yaml';
import { startService } from '../app/serve.ts';
import { parseConfig } from '../core/config.ts';
import { silentLogger } from '../core/logger.ts';
import { freePort } from './support/wait.ts';

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

function resolvePointer(ref: string): unknown {
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/'))
    target = (target as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return target;
}

t.test('info-license, info-license-url', async (t) => {
  const license = (doc.info as Json).license as Json | undefined;
  t.ok(license?.name, 'info.license.name');
  t.match(license?.url, /^https:\/\//, 'info.license.url');
});

t.test('servers: no-empty-servers, no-server-example.com, no-server-trailing-slash', async (t) => {
  const servers = doc.servers as Json[];
  t.ok(servers.length > 0);
  for (const s of servers) {
    t.notMatch(String(s.url), /example\.com/);
    t.ok(s.url === '/' || !String(s.url).endsWith('/'), `${String(s.url)} has no trailing slash`);
  }
});

t.test(
  'operation-operationId, -unique, -url-safe; operation-summary; operation-2xx-response; operation-4xx-response',
  async (t) => {
    const ids = new Set<string>();
    for (const { op, where } of ops) {
      const id = op.operationId as string | undefined;
      t.ok(id, `${where}: operationId`);
      t.notOk(ids.has(id!), `${where}: operationId unique`);
      ids.add(id!);
      t.match(id, /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]+$/, `${where}: operationId url-safe`);
      t.ok(typeof op.summary === 'string' && op.summary.length > 0, `${where}: summary`);
      const codes = Object.keys(op.responses as Json);
      t.ok(
        codes.some((c) => /^2(\d\d|XX)$/.test(c)),
        `${where}: a 2xx response`,
      );
      t.ok(
        codes.some((c) => /^4(\d\d|XX)$/.test(c)),
        `${where}: a 4xx response`,
      );
    }
  },
);

t.test('tag-description, operation-tag-defined', async (t) => {
  const tags = doc.tags as Json[];
  for (const tag of tags)
    t.ok(
      typeof tag.description === 'string' && tag.description.length > 0,
      `tag ${String(tag.name)} has a description`,
    );
  const names = new Set(tags.map((tag) => tag.name));
  for (const { op, where } of ops)
    for (const tag of (op.tags as string[]) ?? []) t.ok(names.has(tag), `${where}: tag ${tag} is declared`);
});

t.test(
  'paths: path-parameters-defined, operation-parameters-unique, no-path-trailing-slash, no-identical-paths, no-ambiguous-paths',
  async (t) => {
    const shapes = new Map<string, string>();
    for (const path of Object.keys(doc.paths as Json)) {
      t.ok(path === '/' || !path.endsWith('/'), `${path}: no trailing slash`);
      const shape = path.replace(/\{[^}]+\}/g, '{}');
      t.notOk(shapes.has(shape), `${path} is not identical to ${shapes.get(shape)}`);
      shapes.set(shape, path);
    }
    const all = [...shapes.keys()].map((s) => s.split('/'));
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const a = all[i]!;
        const b = all[j]!;
        if (a.length !== b.length) continue;
        // ambiguous: each segment equal or a template on one side, and templates on both sides' different segments
        const ambiguous =
          a.every((seg, k) => seg === b[k] || seg === '{}' || b[k] === '{}') &&
          a.some((seg, k) => seg === '{}' && b[k] !== '{}') &&
          b.some((seg, k) => seg === '{}' && a[k] !== '{}');
        t.notOk(ambiguous, `${a.join('/')} and ${b.join('/')} are not ambiguous`);
      }
    }
    for (const { path, op, where } of ops) {
      const params = ((op.parameters ?? []) as Json[]).map((p) =>
        typeof p.$ref === 'string' ? (resolvePointer(p.$ref) as Json) : p,
      );
      const seen = new Set<string>();
      for (const p of params) {
        const key = `${String(p.in)}:${String(p.name)}`;
        t.notOk(seen.has(key), `${where}: parameter ${key} once`);
        seen.add(key);
      }
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
      const declared = params
        .filter((p) => p.in === 'path')
        .map((p) => String(p.name))
        .sort();
      t.same(declared, templated, `${where}: path parameters match the template`);
      for (const p of params.filter((p) => p.in === 'path'))
        t.equal(p.required, true, `${where}: ${String(p.name)} required`);
    }
  },
);

t.test('security-defined', async (t) => {
  const schemes = new Set(Object.keys(((doc.components as Json).securitySchemes ?? {}) as Json));
  for (const { op, where } of ops) {
    t.ok(Array.isArray(op.security), `${where}: security stated (empty for public operations)`);
    for (const requirement of (op.security as Json[]) ?? []) {
      for (const name of Object.keys(requirement)) t.ok(schemes.has(name), `${where}: ${name} is defined`);
    }
  }
});

t.test('no-unresolved-refs, no-unused-components', async (t) => {
  const used = new Set<string>();
  for (const [pointer, node] of walk(doc)) {
    if (typeof node.$ref !== 'string') continue;
    t.ok(node.$ref.startsWith('#/') && resolvePointer(node.$ref) !== undefined, `${pointer}: ${node.$ref} resolves`);
    used.add(node.$ref);
  }
  for (const { op } of ops)
    for (const requirement of (op.security as Json[]) ?? [])
      for (const name of Object.keys(requirement)) used.add(`#/components/securitySchemes/${name}`);
  for (const [kind, entries] of Object.entries(doc.components as Json)) {
    for (const name of Object.keys(entries as Json)) {
      const ref = `#/components/${kind}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      t.ok(used.has(ref), `${ref} is used`);
    }
  }
});

t.test('no-enum-type-mismatch; every pattern compiles; enumerated lists escape their dots', async (t) => {
  for (const [pointer, node] of walk(doc)) {
    if (Array.isArray(node.enum) && typeof node.type === 'string') {
      const type = node.type;
      const ok = node.enum.every((v) => v === null || (type === 'integer' ? Number.isInteger(v) : typeof v === type));
      t.ok(ok, `${pointer}: enum values are ${type}`);
    }
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
          const pointer = `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/${type.replace(/\//g, '~1')}/schema`;
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
