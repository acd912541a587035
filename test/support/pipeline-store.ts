// A real DuckDB file with real schedules imported by store/, for the pipeline's integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { InMemoryEventBus, type EventBus } from '../../core/events.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import type { Alert } from '../../core/types.ts';
import { Db } from '../../store/db.ts';
import { importGtfs } from '../../store/gtfs-import.ts';
import { createHistoryWriter } from '../../store/history-writer.ts';
import { loadScheduleIndex } from '../../store/schedule-index.ts';
import { createPipeline, type Pipeline } from '../../pipeline/ingest.ts';
import { FIXTURES_REAL, hasRealFixtures, testConfig } from './pipeline-fakes.ts';
import { silentLogger } from './logs.ts';

export interface FeedDecl {
  id: string;
  file: string;
  schedule_id?: string;
}

export interface StoreHarness {
  db: Db;
  schedules: Map<string, ScheduleIndex>;
  /** a pipeline over some of the feeds, its clock fixed at `nowIso` (captures are years old) */
  pipelineAt(nowIso: string, feedIds: string[], options?: { bus?: EventBus; initialAlerts?: Alert[] }): Pipeline;
  count(sql: string): Promise<number>;
  close(): Promise<void>;
}

export async function openStoreHarness(zips: Record<string, string>, feeds: FeedDecl[]): Promise<StoreHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'pipeline-store-'));
  const db = await Db.open(join(dir, 'transit.duckdb'));
  const schedules = new Map<string, ScheduleIndex>();
  for (const [id, zip] of Object.entries(zips)) {
    await importGtfs(db, id, join(FIXTURES_REAL, zip));
    schedules.set(id, await loadScheduleIndex(db, id));
  }
  const declared = feeds.map((f) => ({
    id: f.id,
    kind: 'gtfs-rt',
    url: pathToFileURL(join(FIXTURES_REAL, f.file)).href,
    schedule_id: f.schedule_id,
  }));
  return {
    db,
    schedules,
    pipelineAt: (nowIso, feedIds, options = {}) =>
      createPipeline({
        config: testConfig({ feeds: declared.filter((f) => feedIds.includes(f.id)) }),
        bus: options.bus ?? new InMemoryEventBus(),
        history: createHistoryWriter(db),
        scheduleFor: (feed) => (feed.schedule_id ? schedules.get(feed.schedule_id) : undefined),
        initialAlerts: options.initialAlerts,
        now: () => Date.parse(nowIso),
        log: silentLogger,
      }),
    count: async (sql) => Number((await db.all<{ n: bigint | number }>(sql))[0]!.n),
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file over real captures: opens the harness before its tests and closes it after them,
 * or, without the captures, passes with a note. `tests` registers the tests; they read the harness
 * through `harness()` once running.
 */
export function withStoreHarness(
  zips: Record<string, string>,
  feeds: FeedDecl[],
  tests: (harness: () => StoreHarness) => void,
): void {
  if (!hasRealFixtures()) {
    t.comment(`skipping: ${FIXTURES_REAL} is absent`);
    t.skip('no real fixtures', () => {});
    return;
  }
  let opened: StoreHarness | undefined;
  t.before(async () => {
    opened = await openStoreHarness(zips, feeds);
  });
  t.teardown(() => opened?.close());
  tests(() => {
    if (!opened) throw new Error('the store harness is read before it is open');
    return opened;
  });
}
