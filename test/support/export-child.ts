// Child process of crash.test.ts: exports one realtime service day and reports each step on
// stdout, so the parent can kill -9 it in the middle of writing a file.
import { Db } from '../../store/db.ts';
import { runExport } from '../../exports/job.ts';
import { DAY, LATER, TZ } from './exports.ts';

const [dbPath, dir] = process.argv.slice(2);
if (!dbPath || !dir) throw new Error('usage: export-child.ts <db path> <exports dir>');
const db = await Db.open(dbPath);
await runExport(db, {
  dataset: 'realtime',
  from: DAY,
  dir,
  timezone: TZ,
  now: () => LATER,
  onProgress: (p) => process.stdout.write(`${p.step} ${p.manifestId}\n`),
});
process.stdout.write('finished\n');
await db.close();
