import t, { type Test } from 'tap';
import { parseConfig } from '../../core/config.ts';
import { Db } from '../../store/db.ts';
import { ExportArgsError, exportCommandRun } from './export-files.ts';
import { listManifests } from '../../exports/manifests.ts';
import { DAY, TZ, openTempDb, seedDay } from '../../test/support/exports.ts';

async function setup(t: Test) {
  const temp = await openTempDb(t.teardown);
  await seedDay(temp.db);
  await temp.db.close(); // the command opens the database itself
  const config = parseConfig({
    db_path: temp.dbPath,
    exports: { dir: temp.exportsDir },
    reliability: { timezone: TZ },
  });
  return { ...temp, config };
}

function fakeTty() {
  const written: string[] = [];
  return {
    written,
    stream: {
      isTTY: true,
      write: (s: string) => {
        written.push(s);
        return true;
      },
    } as unknown as NodeJS.WriteStream,
  };
}

t.test('export command: writes the files, draws progress on a TTY, prints one line per file', async (t) => {
  const { config, dbPath } = await setup(t);
  const lines: string[] = [];
  const tty = fakeTty();
  const code = await exportCommandRun({ dataset: 'alerts,reliability', from: DAY, format: 'parquet' }, config, {
    out: (l) => lines.push(l),
    stream: tty.stream,
  });
  t.equal(code, 0);
  t.match(lines[0], /service days in America\/New_York/);
  t.match(lines.slice(1).sort(), [
    /^ready +alerts-2024-03-10\.parquet +2 rows +\d+ bytes +sha256 [0-9a-f]{64}$/,
    /^ready +reliability-2024-03-10\.parquet +3 rows/,
  ]);
  t.ok(
    tty.written.some((w) => /\[#+\.*\] +\d+%/.test(w)),
    'a progress bar was drawn',
  );
  t.equal(tty.written.at(-1), '\r\x1b[K', 'and cleared');

  const again: string[] = [];
  t.equal(
    await exportCommandRun({ dataset: 'alerts', from: DAY, format: 'parquet' }, config, { out: (l) => again.push(l) }),
    0,
  );
  t.match(again[1], /^already ready +alerts-2024-03-10\.parquet/);

  const db = await Db.open(dbPath);
  t.equal((await listManifests(db, { limit: 10, state: 'ready' })).items.length, 2);
  await db.close();
});

t.test('export command: a day not over yet exits 1; bad arguments are usage errors', async (t) => {
  const { config } = await setup(t);
  const lines: string[] = [];
  t.equal(await exportCommandRun({ from: '2999-01-01' }, config, { out: (l) => lines.push(l) }), 1);
  t.equal(lines.filter((l) => l.startsWith('not ready')).length, 10, 'every dataset and format, each reported');
  await t.rejects(exportCommandRun({ dataset: 'weather', from: DAY }, config), ExportArgsError);
  await t.rejects(
    exportCommandRun({ dataset: 'alerts', from: DAY, format: 'csv,parquet' }, config),
    /unknown format "csv"/,
  );
  await t.rejects(exportCommandRun({ dataset: 'all', from: '10/03/2024' }, config), ExportArgsError);
  await t.rejects(exportCommandRun({ dataset: ',', from: DAY }, config), /unknown dataset/);
});
