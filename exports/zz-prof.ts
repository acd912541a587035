import { openTempDb, seedManyPositions, DAY, TZ, LATER } from './test-support.ts';
import { runExport } from './job.ts';
import { serviceDayWindow } from './service-day.ts';
import { DATASETS, partSelect } from './datasets.ts';
import { describeSelect, prepareExportConnection, sha256File } from './writer.ts';
const fns: any[] = [];
const { db, exportsDir, root } = await openTempDb((f) => fns.push(f));
await seedManyPositions(db, 1_000_000);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const day = serviceDayWindow(DAY, TZ);
const part = DATASETS.realtime.parts[1]!;
const conn = await db.connect();
await prepareExportConnection(conn);
for (let r = 0; r < 3; r++) {
  let c0 = cpu(); let w0 = performance.now();
  const lap = (l: string) => { const c = cpu(), w = performance.now(); console.log(l.padEnd(12), 'cpu', Math.round(c - c0), 'wall', Math.round(w - w0)); c0 = c; w0 = w; };
  await conn.run(`COPY (SELECT * FROM vehicle_positions WHERE observed_at >= TIMESTAMPTZ '${day.start.toISOString()}' AND observed_at < TIMESTAMPTZ '${day.end.toISOString()}') TO '${root}/raw.parquet' (FORMAT parquet, COMPRESSION zstd)`); lap('raw');
  await conn.run(`COPY (${partSelect(part, day, 'parquet')}) TO '${root}/p.parquet' (FORMAT parquet, COMPRESSION zstd)`); lap('partSelect');
  await conn.run('BEGIN TRANSACTION');
  await conn.run(`COPY (${partSelect(part, day, 'parquet')}) TO '${root}/q.parquet' (FORMAT parquet, COMPRESSION zstd)`); lap('in txn');
  await conn.run('ROLLBACK');
  await describeSelect(conn, partSelect(part, day, 'typed')); lap('describe');
  await sha256File(`${root}/q.parquet`); lap('sha');
  await runExport(db, { dataset: 'realtime', from: DAY, dir: exportsDir, timezone: TZ, now: () => LATER, formats: ['parquet'], force: true }); lap('job');
}
conn.closeSync();
for (const f of fns) await f();
