import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Inside the binary binary/entry.ts is exercised by binary/single-executable.test.ts; run by plain Node it must
// refuse, not fall through to the app with no extracted files.

t.test('the SEA entry refuses to run outside the single executable', async (t) => {
  const entry = fileURLToPath(new URL('./entry.ts', import.meta.url));
  const run = spawnSync(process.execPath, ['--import', 'tsx', entry, '--version'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(run.status, 1);
  t.equal(run.stdout, '', 'the CLI did not run');
  t.match(
    run.stderr,
    new RegExp(
      'transit-api: cannot start: this bundle only runs as the transit-api single executable; from a ch' +
        String.raw`eckout use bin\/transit-api\.js`,
    ),
  );
});
