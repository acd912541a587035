import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { spillPath, takeSpill, writeSpill } from './event-spill.ts';

t.test('events kept at a stop are read once, in order, at the next start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'spill-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(spillPath(':memory:'), null, 'nothing to keep beside a database in memory');
  const path = spillPath(join(dir, 'transit.duckdb'))!;
  t.same(takeSpill(path), [], 'none kept');
  const payloads = ['{"type":"a","n":1}', '{"type":"b","text":"line\\nbreak"}'];
  writeSpill(path, payloads);
  t.equal(statSync(path).mode & 0o777, 0o600, 'readable by the service only');
  t.same(takeSpill(path), payloads);
  t.notOk(existsSync(path), 'gone once taken');
  t.same(takeSpill(path), []);
});
