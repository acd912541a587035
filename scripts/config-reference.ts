// The configuration reference as a Markdown table, generated from the one zod schema
// (core/config.ts): keys, types and limits, defaults from the schema itself (via its JSON Schema),
// descriptions from the doc comments above each key and the messages of its checks.
//   npm run config-reference                      prints the table
//   npm run config-reference -- --update FILE     rewrites the block between the markers in FILE
//   npm run config-reference -- --check FILE      exits 1 when that block is out of date
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';
import { z } from 'zod';

export const BEGIN = '<!-- config-reference:begin (npm run config-reference -- --update FILE) -->';
export const END = '<!-- config-reference:end -->';

interface KeyDoc {
  doc: string;
  rules: string[];
}
type JsonSchema = {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  minItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
};

/** Doc comments and check messages by key path (`feeds[].url`), read from the schema's source. */
export function readKeyDocs(sourcePath: string, rootName: string): Map<string, KeyDoc> {
  const file = ts.createSourceFile(sourcePath, readFileSync(sourcePath, 'utf8'), ts.ScriptTarget.ES2022, true);
  const consts = new Map<string, ts.Expression>();
  file.forEachChild(function visit(node) {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer)
      consts.set(node.name.text, node.initializer);
    node.forEachChild(visit);
  });
  const docs = new Map<string, KeyDoc>();

  // Walks a zod builder chain (z.object({...}).strict().default(...), z.array(X), feedId, ...).
  function walk(expr: ts.Expression, path: string, rules: string[], seen: Set<string>): void {
    if (ts.isIdentifier(expr)) {
      const target = consts.get(expr.text);
      if (target && !seen.has(expr.text)) walk(target, path, rules, new Set([...seen, expr.text]));
      return;
    }
    if (!ts.isCallExpression(expr) || !ts.isPropertyAccessExpression(expr.expression)) return;
    const method = expr.expression.name.text;
    const [first, second] = expr.arguments;
    if ((method === 'refine' || method === 'regex') && second && ts.isStringLiteralLike(second))
      rules.push(second.text);
    if (method === 'array' && first) walk(first, `${path}[]`, [], seen);
    if (method === 'object' && first && ts.isObjectLiteralExpression(first)) {
      for (const prop of first.properties) {
        const shorthand = ts.isShorthandPropertyAssignment(prop);
        if (!(shorthand || ts.isPropertyAssignment(prop)) || !ts.isIdentifier(prop.name)) continue;
        const key = path ? `${path}.${prop.name.text}` : prop.name.text;
        const doc = ts
          .getJSDocCommentsAndTags(prop)
          .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
          .join(' ')
          .trim();
        const keyRules: string[] = [];
        docs.set(key, { doc, rules: keyRules });
        walk(shorthand ? prop.name : prop.initializer, key, keyRules, seen);
      }
    }
    walk(expr.expression.expression, path, rules, seen);
  }
  const root = consts.get(rootName);
  if (!root) throw new Error(`${sourcePath} declares no ${rootName}`);
  walk(root, '', [], new Set([rootName]));
  return docs;
}

const code = (value: unknown) => `\`${JSON.stringify(value)}\``;

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map(code).join(' or ');
  const limits: string[] = [];
  if (s.minimum !== undefined) limits.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) limits.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER) limits.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) limits.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength) limits.push(s.minLength === 1 ? 'not empty' : `at least ${s.minLength} characters`);
  if (s.minItems) limits.push(`at least ${s.minItems}`);
  if (s.format === 'uri') limits.push('URL');
  let base = s.type ?? 'any';
  if (s.type === 'array' && s.items)
    base = s.items.type === 'object' ? 'list of objects' : `list of ${typeOf(s.items)}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') {
    base = `map of ${typeOf(s.additionalProperties)}`;
  }
  return limits.length ? `${base} (${limits.join(', ')})` : base;
}

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

function rows(schema: JsonSchema, docs: Map<string, KeyDoc>, prefix = ''): Row[] {
  const out: Row[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (prop.type === 'object' && prop.properties) {
      out.push(...rows(prop, docs, key));
      continue;
    }
    const doc = docs.get(key);
    const text = [prop.description ?? doc?.doc ?? '', ...(doc?.rules ?? []).map((r) => `(invalid: “${r}”)`)]
      .filter(Boolean)
      .join(' ');
    const fallback = required.has(name) && prop.default === undefined ? 'required' : 'unset';
    out.push({
      key,
      type: typeOf(prop),
      default: prop.default === undefined ? fallback : code(prop.default),
      description: text,
    });
    if (prop.type === 'array' && prop.items?.type === 'object') out.push(...rows(prop.items, docs, `${key}[]`));
  }
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown table for a zod object schema declared as `rootName` in `sourcePath`. */
export function renderConfigReference(schema: z.ZodType, sourcePath: string, rootName: string): string {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const lines = ['| Key | Type | Default | Description |', '| --- | --- | --- | --- |'];
  for (const r of rows(json, readKeyDocs(sourcePath, rootName))) {
    lines.push(`| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Replaces the generated block between the markers; throws when the markers are missing. */
export function replaceBlock(document: string, table: string): string {
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`no ${BEGIN} … ${END} block`);
  return `${document.slice(0, begin + BEGIN.length)}\n${table}${document.slice(end)}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { update: { type: 'string' }, check: { type: 'string' } } });
  const { ConfigSchema } = await import('../core/config.ts');
  const source = fileURLToPath(new URL('../core/config.ts', import.meta.url));
  const table = renderConfigReference(ConfigSchema, source, 'ConfigSchema');
  const target = values.update ?? values.check;
  if (!target) {
    process.stdout.write(table);
    return;
  }
  const current = readFileSync(resolve(target), 'utf8');
  const next = replaceBlock(current, table);
  if (values.check) {
    if (next !== current) {
      console.error(
        `${target}: the config reference is out of date; run npm run config-reference -- --update ${target}`,
      );
      process.exitCode = 1;
    }
    return;
  }
  if (next !== current) writeFileSync(resolve(target), next);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
