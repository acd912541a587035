// uWebSockets.js falls back to a slow JS server when its binary cannot load; the server must
// refuse to start instead. The fallback is forced in a child process with UWS_USE_FALLBACK.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const script = `
  const { startServer } = await import('./http/server.ts');
  try {
    const handler = { handle: async () => ({ status: 200, headers: [], body: '' }), close: async () => {} };
    await startServer({ handler, port: 0 });
    console.log('STARTED');
    process.exit(0);
  } catch (err) {
    console.log('REFUSED: ' + err.message);
    process.exit(3);
  }
`;

t.test('the JS fallback is refused', async (t) => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env: { ...process.env, UWS_USE_FALLBACK: 'true' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(run.status, 3, run.stderr);
  t.match(run.stdout, /REFUSED: uWebSockets\.js did not load its native binary/);
});
