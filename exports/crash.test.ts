import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { Db } from '../store/db.ts';
import { recoverExports, runExport } from './job.ts';
import { listManifests, type ExportManifest } from './manifests.ts';
import {
  DAY,
  EXPECTED_DAY_ROWS,
  LATER,
  TZ,
  openTempDb,
  readParquetFile,
  seedDay,
  seedManyPositions,
} from '../test/support/exports.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..');
// enough rows that writing the NDJSON file takes a while, few enough to keep the test quick
const POSITIONS = 100_000;
const BIG_FILE = `realtime-${DAY}-vehicle_positions.ndjson.gz`;

/** Every ready row names a complete file: size, sha256 and row count as recorded. */
function checkReadyFiles(t: Test, exportsDir: string, manifests: ExportManifest[]): void {
  for (const m of manifests.filter((x) => x.state === 'ready')) {
    const path = join(exportsDir, m.file_path);
    const bytes = readFileSync(path);
    t.equal(bytes.length, m.bytes, `${m.id}: size as recorded`);
    t.equal(createHash('sha256').update(bytes).digest('hex'), m.sha256, `${m.id}: sha256 as recorded`);
    const rows = m.format === 'parquet' ? readParquetFile(path).numRows : countLines(gunzipSync(bytes));
    t.equal(rows, m.rows, `${m.id}: complete (${rows} rows)`);
  }
}

const countLines = (text: Buffer): number => {
  let n = 0;
  for (let i = text.indexOf(10); i !== -1; i = text.indexOf(10, i + 1)) n++;
  return n;
};

const tempFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter((n) => n.includes('.tmp-'));
  } catch {
    return [];
  }
};

t.test('kill -9 during an export: no incomplete file is ever listed, and a restart completes the job', async (t) => {
  const { db, dbPath, exportsDir } = await openTempDb(t.teardown);
  await seedDay(db);
  await seedManyPositions(db, POSITIONS);
  await db.close();

  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'test', 'support', 'export-child.ts'), dbPath, exportsDir],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const seen: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  // kill -9 as soon as DuckDB's COPY has created the big file's temporary file: a half file
  // exists on disk and the process gets no chance to clean up
  let halfFile: string | undefined;
  const killOnceHalfWritten = () => {
    const poll = setInterval(() => {
      halfFile = tempFiles(exportsDir).find((n) => n.includes(BIG_FILE));
      if (halfFile === undefined) return;
      clearInterval(poll);
      child.kill('SIGKILL');
    }, 2);
    child.on('exit', () => clearInterval(poll));
  };
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      seen.push(line);
      if (line === `writing ${BIG_FILE}`) killOnceHalfWritten();
    }
  });
  const { signal } = await exited;
  t.equal(signal, 'SIGKILL', 'the child was killed, not finished');
  t.notOk(seen.includes('finished'));
  t.ok(halfFile, 'killed while the temporary file was being written');
  t.comment(`child got as far as: ${seen.join(' | ')}; temp files left: ${tempFiles(exportsDir).length}`);

  const reopened = await Db.open(dbPath);
  t.teardown(() => reopened.close());
  const afterCrash = (await listManifests(reopened, { limit: 100 })).items;
  t.equal(afterCrash.length, 4, 'the four files of the day were queued');
  t.notOk(
    afterCrash.some((m) => m.id === BIG_FILE && m.state === 'ready'),
    'the file being written is not listed ready',
  );
  checkReadyFiles(t, exportsDir, afterCrash);

  const recovered = await recoverExports(reopened, exportsDir);
  t.ok(recovered.reset.includes(BIG_FILE), 'the interrupted file was running and is reset to pending');
  t.same(tempFiles(exportsDir), [], 'stray temporary files are deleted');
  t.same(recovered.requeued, [], 'no ready file was damaged');

  const rerun = await runExport(reopened, {
    dataset: 'realtime',
    from: DAY,
    dir: exportsDir,
    timezone: TZ,
    now: () => LATER,
  });
  const outcomes = Object.fromEntries(rerun.files.map((f) => [f.id, f.outcome]));
  t.equal(outcomes[BIG_FILE], 'ready', 'the rerun completes the interrupted file');
  t.ok(rerun.files.every((f) => f.outcome === 'ready' || f.outcome === 'already_ready'));
  const final = (await listManifests(reopened, { limit: 100 })).items;
  t.same(
    final.map((m) => m.state),
    ['ready', 'ready', 'ready', 'ready'],
  );
  t.equal(final.find((m) => m.id === BIG_FILE)!.rows, POSITIONS + EXPECTED_DAY_ROWS.vehicle_positions);
  checkReadyFiles(t, exportsDir, final);
});
