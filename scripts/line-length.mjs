#!/usr/bin/env node
// The one lint rule Biome does not have: no line of code longer than the formatter's width
// (biome.json formatter.lineWidth). The formatter breaks code at that width but leaves what it
// cannot break: long strings, templates, comments and regular expressions. Lists each such line
// as `file:line: N characters` and exits 1 when there is one. Run by `npm run lint`.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const width = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')).formatter.lineWidth;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
// what biome.json leaves out, and what is not ours
const SKIP = new Set(['node_modules', 'dist', 'data', 'coverage']);

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.') || SKIP.has(e.name)) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return walk(path);
    return SOURCE.test(e.name) ? [path] : [];
  });
}

const long = [];
for (const file of walk(root)) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      // characters as the formatter counts them, not bytes: `…` is one
      const length = [...line].length;
      if (length > width) long.push(`${relative(root, file)}:${i + 1}: ${length} characters`);
    });
}
for (const line of long) console.log(line);
if (long.length) {
  console.error(`${long.length} lines longer than ${width} characters (biome.json formatter.lineWidth)`);
  process.exit(1);
}
