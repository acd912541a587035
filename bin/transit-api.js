#!/usr/bin/env node
// The package's executable (`npx transit-api`, `npm start`): the built runtime, compiled
// JavaScript made by `npm run build` (which `npm install` and `npm ci` run through `prepare`).
// It is loaded with require(), not import(): import() of a CommonJS file first scans all of its
// text for export names. From the sources, while developing: `npm run dev -- <command>` (tsx).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/transit-api.cjs', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write(
    'transit-api: dist/transit-api.cjs is missing: run `npm run build` (npm install and npm ci run it)\n',
  );
  process.exit(1);
}
createRequire(import.meta.url)(bundle);
