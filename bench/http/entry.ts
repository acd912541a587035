import { join } from 'node:path';
import { setAssetRoot } from '../../core/assets.ts';

// Entry of the bundle bench/http.ts builds (.bench-bundle/http.cjs), as cli/dist-entry.ts is of
// dist/transit-api.cjs: the files the app reads stay in the checkout, one folder above the bundle,
// and are named before the app's modules are evaluated.

setAssetRoot(join(__dirname, '..'));
import('./run.ts')
  .then((bench) => bench.main())
  .then(
    // the servers are closed; a stray handle (DuckDB's, a Redis socket) must not hold the bench open
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`bench:http failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
