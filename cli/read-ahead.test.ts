import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { encodeFeed, header } from '../test/support/pipeline-fakes.ts';
import { readAhead } from './read-ahead.ts';
import { resolveSources, SourceError, validateSources, type SnapshotReport } from './validate.ts';

t.test(
  'readAhead: the whole file, an empty one, a failure kept as a value, no read for what is not a file',
  async (t) => {
    const dir = t.testdir();
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.from(Array.from({ length: 3_000_000 }, (_, i) => (i * 7) % 251)));
    t.same(Buffer.from((await readAhead(big)) as Uint8Array), readFileSync(big));
    const empty = join(dir, 'empty.pb');
    writeFileSync(empty, '');
    t.equal(((await readAhead(empty)) as Uint8Array).length, 0);
    const missing = await readAhead(join(dir, 'nope.pb'));
    t.ok(missing instanceof Error && (missing as NodeJS.ErrnoException).code === 'ENOENT', 'ENOENT, not thrown');
    mkdirSync(join(dir, 'folder'));
    t.equal(readAhead(join(dir, 'folder')), null, 'a folder (or a pipe) is read at its turn');
  },
);

t.test('validate reads ahead, yet reports in order: the files before an unreadable one come first', async (t) => {
  const dir = t.testdir();
  const body = encodeFeed({ header: header(1_714_665_600), entity: [] });
  for (const name of ['a.pb', 'b.pb', 'c.pb', 'd.pb']) writeFileSync(join(dir, name), body);
  const sources = resolveSources([dir]);
  rmSync(join(dir, 'c.pb'));
  const seen: string[] = [];
  const onSnapshot = (report: SnapshotReport) => seen.push(report.source);
  await t.rejects(
    validateSources(sources, { onSnapshot }),
    new SourceError(`no such file or folder: ${join(dir, 'c.pb')}`),
  );
  t.same(seen, [join(dir, 'a.pb'), join(dir, 'b.pb')]);
  writeFileSync(join(dir, 'c.pb'), body);
  seen.length = 0;
  const summary = await validateSources(sources, { onSnapshot });
  t.equal(summary.snapshots, 4);
  t.same(
    seen,
    sources.map((s) => (s.kind === 'file' ? s.path : s.url)),
  );
});
