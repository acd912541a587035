import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { z } from 'zod';
import { ConfigSchema } from '../core/config.ts';
import { BEGIN, END, renderConfigReference, replaceBlock } from '../scripts/config-reference.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

t.test('the config reference in docs/guides/configuration.md matches the schema', async (t) => {
  const doc = readFileSync(join(repoRoot, 'docs', 'guides', 'configuration.md'), 'utf8');
  const table = renderConfigReference(ConfigSchema, join(repoRoot, 'core', 'config.ts'), 'ConfigSchema');
  t.equal(replaceBlock(doc, table), doc, 'run: npm run config-reference -- --update docs/guides/configuration.md');
  t.match(table, /\| `port` \| integer \(≥ 0, ≤ 65535\) \| `8080` \|/);
  t.match(table, /\| `feeds\[\]\.url` \| string \| required \|/);
});

t.test('keys, types, defaults and descriptions come from the schema and its comments', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-ref-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const code = z.string().regex(/^[a-z]+$/, 'lowercase letters');
  const Item = z.object({ code, weight_kg: z.number().positive().default(1) }).strict();
  const Root = z
    .object({
      port: z.number().int().min(0).max(65_535).default(8080),
      items: z.array(Item).default([]),
      nested: z
        .object({ mode: z.enum(['a', 'b']).default('a') })
        .strict()
        .default({ mode: 'a' }),
      secret: z.string().min(16).optional(),
      tags: z.record(z.string(), z.string()).default({}),
    })
    .strict();
  const source = join(dir, 'schema.ts');
  writeFileSync(
    source,
    `
    const code = z.string().regex(/^[a-z]+$/, 'lowercase letters');
    const Item = z.object({
      /** the item's code */
      code,
      weight_kg: z.number().positive().default(1),
    }).strict();
    export const Root = z.object({
      /** listen port | 0 picks one */
      port: z.number().int().min(0).max(65_535).default(8080),
      items: z.array(Item).default([]),
      nested: z.object({
        /** which mode */
        mode: z.enum(['a', 'b']).default('a'),
      }).strict().default({ mode: 'a' }),
      secret: z.string().min(16).optional(),
      tags: z.record(z.string(), z.string()).default({}),
    }).strict();
  `,
  );
  t.equal(
    renderConfigReference(Root, source, 'Root'),
    [
      '| Key | Type | Default | Description |',
      '| --- | --- | --- | --- |',
      '| `port` | integer (≥ 0, ≤ 65535) | `8080` | listen port \\| 0 picks one |',
      '| `items` | list of objects | `[]` |  |',
      "| `items[].code` | string | required | the item's code (invalid: “lowercase letters”) |",
      '| `items[].weight_kg` | number (> 0) | `1` |  |',
      '| `nested.mode` | `"a"` or `"b"` | `"a"` | which mode |',
      '| `secret` | string (at least 16 characters) | unset |  |',
      '| `tags` | map of string | `{}` |  |',
      '',
    ].join('\n'),
  );
  t.throws(() => renderConfigReference(Root, source, 'Missing'), /declares no Missing/);
});

t.test('the generated block is replaced between its markers only', async (t) => {
  const doc = `# Title\n\n${BEGIN}\nold table\n${END}\n\nafter\n`;
  t.equal(replaceBlock(doc, '| new |\n'), `# Title\n\n${BEGIN}\n| new |\n${END}\n\nafter\n`);
  t.throws(() => replaceBlock('# no markers', 'x'), /no <!-- config-reference:begin/);
});
