// Config reload (SIGHUP, `transit-api reload`): the file is read and validated again; an invalid
// one is refused with every problem and the running config kept. Feeds and schedules added,
// changed or removed apply at once without touching connections; every other changed setting
// is reported as needing a restart and keeps its running value until then.
import { ConfigError, type Config, type FeedConfig, type ScheduleConfig } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { formatIdChanges, idChanges } from '../core/served-id-changes.ts';
import type { ServedIds } from '../core/served-ids.ts';
import type { ScheduleRefreshJob } from '../store/schedule-refresh.ts';
import type { ReloadOutcome } from '../admin/operations/types.ts';
import type { Runtime } from './runtime.ts';

export interface ConfigDiff {
  feeds: { added: FeedConfig[]; changed: FeedConfig[]; removed: string[] };
  schedules: { added: ScheduleConfig[]; changed: ScheduleConfig[]; removed: string[] };
  /** paths of other settings that differ (`port`, `api.key_recheck_ms` …) */
  needs_restart: string[];
}

const LIVE_KEYS: ReadonlySet<string> = new Set(['feeds', 'schedules']);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function byId<T extends { id: string }>(before: readonly T[], after: readonly T[]) {
  const old = new Map(before.map((x) => [x.id, x]));
  const next = new Map(after.map((x) => [x.id, x]));
  return {
    added: after.filter((x) => !old.has(x.id)),
    changed: after.filter((x) => old.has(x.id) && !same(old.get(x.id), x)),
    removed: before.filter((x) => !next.has(x.id)).map((x) => x.id),
  };
}

export function diffConfig(running: Readonly<Config>, next: Readonly<Config>): ConfigDiff {
  const needs: string[] = [];
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]);
  for (const key of [...keys].sort()) {
    if (LIVE_KEYS.has(key)) continue;
    const a = (running as Record<string, unknown>)[key];
    const b = (next as Record<string, unknown>)[key];
    if (same(a, b)) continue;
    if (isObject(a) && isObject(b)) {
      for (const sub of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        if (!same(a[sub], b[sub])) needs.push(`${key}.${sub}`);
      }
    } else {
      needs.push(key);
    }
  }
  return {
    feeds: byId(running.feeds, next.feeds),
    schedules: byId(running.schedules, next.schedules),
    needs_restart: needs,
  };
}

export interface ReloaderDeps {
  runtime: Runtime;
  /** reads and validates the config file again (throws ConfigError) */
  read: () => Readonly<Config>;
  /** the file read, for messages; null when the config is built in */
  file: string | null;
  /** the schedule refresh job: fetches new and changed sources now and swaps each new version in */
  schedules: Pick<ScheduleRefreshJob, 'update'>;
  /** the feeds in force after a reload (status page intervals) */
  feedsChanged: (feeds: readonly FeedConfig[]) => void;
  /** the served ids in force, and a reload of them and of what lists routes by them */
  ids?: { current: () => ServedIds; reload: () => Promise<void> };
  log: Logger;
}

/** A reload function; overlapping calls run one after the other. */
export function createReloader(deps: ReloaderDeps): () => Promise<ReloadOutcome> {
  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const run = queue.then(() => reload(deps));
    queue = run.catch(() => undefined);
    return run;
  };
}

async function reload(deps: ReloaderDeps): Promise<ReloadOutcome> {
  const { runtime, log } = deps;
  const outcome: ReloadOutcome = {
    applied: false,
    file: deps.file,
    problems: [],
    needs_restart: [],
    failed: [],
    feeds: { added: [], changed: [], removed: [] },
    schedules: { added: [], changed: [], removed: [] },
    ids: [],
  };
  let next: Readonly<Config>;
  try {
    next = deps.read();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    outcome.problems = err.problems;
    log.warn({ problems: err.problems, file: deps.file }, `reload refused, the running config is kept: ${err.message}`);
    return outcome;
  }
  const running = runtime.config;
  const diff = diffConfig(running, next);
  const idsBefore = deps.ids?.current();

  // schedules first, so that feeds added with them resolve trips from their first poll; one
  // whose source fails keeps its running version (if any) and is retried on its refresh_cron
  const d = diff.schedules;
  const failed = new Set<string>();
  if (d.added.length + d.changed.length + d.removed.length > 0) {
    try {
      for (const result of await deps.schedules.update(next.schedules)) {
        if (result.outcome !== 'failed') continue;
        failed.add(result.schedule_id);
        outcome.failed.push(`schedule ${result.schedule_id}: ${result.error ?? 'refresh failed'}`);
      }
    } catch (err) {
      outcome.failed.push(`schedules: ${(err as Error).message}`);
      for (const s of [...d.added, ...d.changed]) failed.add(s.id);
    }
  }
  for (const schedule of d.added) {
    if (failed.has(schedule.id)) continue;
    // a source already imported under this id answers "unchanged": its version is loaded as it is
    if (!runtime.schedules.has(schedule.id)) {
      try {
        await runtime.loadSchedule(schedule.id);
      } catch (err) {
        outcome.failed.push(`schedule ${schedule.id}: ${(err as Error).message}`);
        continue;
      }
    }
    outcome.schedules.added.push(schedule.id);
  }
  outcome.schedules.changed = d.changed.map((s) => s.id).filter((id) => !failed.has(id));
  for (const id of d.removed) runtime.schedules.delete(id);
  outcome.schedules.removed = d.removed;
  runtime.setConfig(Object.freeze({ ...running, feeds: next.feeds, schedules: next.schedules }) as Readonly<Config>);

  for (const id of diff.feeds.removed) await runtime.pipeline.removeFeed(id);
  for (const feed of [...diff.feeds.added, ...diff.feeds.changed]) runtime.pipeline.upsertFeed(feed);
  deps.feedsChanged(next.feeds);
  outcome.feeds = {
    added: diff.feeds.added.map((f) => f.id),
    changed: diff.feeds.changed.map((f) => f.id),
    removed: diff.feeds.removed,
  };
  outcome.needs_restart = diff.needs_restart;
  outcome.applied = true;
  if (deps.ids && idsBefore) {
    // prefixes, schedules and feeds' schedules decide served ids: what changed is reported
    try {
      await deps.ids.reload();
      outcome.ids = idChanges(idsBefore, deps.ids.current());
    } catch (err) {
      outcome.failed.push(`served ids: ${(err as Error).message}`);
    }
  }
  const list = (ids: string[]) => (ids.length ? ids.join(',') : '-');
  log.info(
    { reload: outcome },
    `reload applied: feeds +${list(outcome.feeds.added)} ~${list(outcome.feeds.changed)} ` +
      `-${list(outcome.feeds.removed)}; ` +
      `schedules +${list(outcome.schedules.added)} ~${list(outcome.schedules.changed)} ` +
      `-${list(outcome.schedules.removed)}` +
      (outcome.failed.length ? `; failed: ${outcome.failed.join('; ')}` : '') +
      (outcome.needs_restart.length ? `; needs restart: ${outcome.needs_restart.join(', ')}` : '') +
      (outcome.ids.length ? `; served ids changed:\n  ${formatIdChanges(outcome.ids).join('\n  ')}` : ''),
  );
  return outcome;
}
