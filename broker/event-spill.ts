// Events the ingest node could not hand to the broker before it stopped (the broker was down):
// kept in a file beside the database, one encoded event per line, and appended first when the
// node starts again, so a broker outage that outlasts the ingest node loses no event. The file is
// read and deleted at start: what is then queued in memory is lost by a crash, as any queue is.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** The spill file of a database path; null for a database in memory. */
export function spillPath(dbPath: string): string | null {
  return dbPath === ':memory:' ? null : `${dbPath}.unsent-events`;
}

export function writeSpill(path: string, payloads: readonly string[]): void {
  const temp = `${path}.tmp`;
  writeFileSync(temp, payloads.map((p) => `${p}\n`).join(''), { mode: 0o600 });
  renameSync(temp, path);
}

/** The events kept by the last stop, oldest first; the file is gone afterwards. */
export function takeSpill(path: string): string[] {
  if (!existsSync(path)) return [];
  const payloads = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);
  rmSync(path, { force: true });
  return payloads;
}
