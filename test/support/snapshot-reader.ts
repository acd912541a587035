// Child process of snapshot.test.ts: opens an analyst snapshot read-only, as an analyst would,
// and answers the parent on stdout (one JSON line per request read from stdin).
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';

const [snapshotPath, readmePath] = process.argv.slice(2);
if (!snapshotPath || !readmePath) throw new Error('usage: snapshot-reader.ts <snapshot> <README.md>');
const instance = await DuckDBInstance.create(snapshotPath, { access_mode: 'READ_ONLY' });
const conn = await instance.connect();
const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();

async function counts() {
  const [c] = await rows(`SELECT (SELECT count(*) FROM vehicle_positions) AS vehicle_positions,
    (SELECT count(*) FROM arrivals) AS arrivals`);
  return c;
}

// the README's example queries, so the documentation cannot drift from what works
const examples = [...readFileSync(readmePath, 'utf8').matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
const report = {
  tables: (await rows('SELECT table_name FROM duckdb_tables() ORDER BY table_name')).map((r) => r.table_name),
  info: (await rows('SELECT taken_at, source, tables FROM snapshot_info'))[0],
  counts: await counts(),
  examples: [] as ({ rows: number } | { error: string })[],
  write: await conn.run('CREATE TABLE analyst_scratch (x INTEGER)').then(
    () => 'allowed',
    (err: Error) => err.message,
  ),
};
for (const sql of examples) {
  try {
    report.examples.push({ rows: (await rows(sql)).length });
  } catch (err) {
    report.examples.push({ error: (err as Error).message });
  }
}
process.stdout.write(`${JSON.stringify(report)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'counts') process.stdout.write(`${JSON.stringify(await counts())}\n`);
  else break;
}
conn.closeSync();
instance.closeSync();
