import type { Db } from './db.ts';
import type { HeldFilter } from './history-changes.ts';

// History writers hold back the last unchanged rows of trips still on the road (history-changes.ts).
// Whoever reads a service day as final (the reliability finalize) has them written first, so
// what a day's rows say does not depend on whether its last trips had timed out yet.

type Flush = (filter: HeldFilter) => Promise<number>;

const holders = new WeakMap<Db, Set<Flush>>();

/** Registers a writer's flush with its database. */
export function holdHistory(db: Db, flush: Flush): void {
  let set = holders.get(db);
  if (!set) {
    set = new Set();
    holders.set(db, set);
  }
  set.add(flush);
}

/** Writes every row held back for service days up to `through` (all of them without it); the rows written. */
export async function writeHeldHistory(db: Db, filter: HeldFilter = {}): Promise<number> {
  let written = 0;
  for (const flush of holders.get(db) ?? []) written += await flush(filter);
  return written;
}
