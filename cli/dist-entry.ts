import { join } from 'node:path';
import { setAssetRoot } from '../core/assets.ts';

// Entry of the built runtime: `npm run build` bundles it with the app into dist/transit-api.cjs,
// which bin/transit-api.js runs. The files the service reads (SQL, the .proto, the OpenAPI
// document, pages) stay in the checkout, one folder above the bundle; core/assets.ts cannot find
// them through import.meta.url in a CommonJS bundle, so it is told here, before the CLI's
// modules are evaluated (esbuild initialises a dynamically imported module when it is imported).

setAssetRoot(join(__dirname, '..'));
import('./main.ts').catch((err: unknown) => {
  // before the app's logger exists: plain stderr, with the stack
  process.stderr.write(
    `transit-api: cannot start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
});
