// `transit-api init`: one's own agency from nothing to a running API in one command. Every feed is
// checked (one snapshot each) before anything is written; then the schedule is imported into a new
// database, a commented config and a first Max key are written, and the next commands printed.
// A refusal leaves nothing behind that init created.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createKey } from '../../accounts/keys.ts';
import { type Config, ConfigError, parseConfig, SCHEDULE_DEFAULTS } from '../../core/config.ts';
import { utcDate, wallClock } from '../../core/dates.ts';
import { MODES, type Mode } from '../../core/types.ts';
import { Db, dbOptions } from '../../store/db.ts';
import { loadScheduleIndex, type LoadedScheduleIndex } from '../../store/schedule-index.ts';
import { importScheduleVersion, type ImportedVersion } from '../../store/schedule-refresh.ts';
import { UsageError } from '../../core/usage-error.ts';
import { isLockError } from '../run-operation.ts';
import { configObject, renderConfig, type InitPlan } from './config-file.ts';
import {
  FEED_ROLES,
  fetchFeed,
  reportFeed,
  ROLE_INFO,
  type FeedRole,
  type FeedSource,
  type FetchedFeed,
} from './feed-check.ts';
import { fetchSchedule, GtfsCheckError, scheduleSource, slug, type FetchedSchedule } from './gtfs-check.ts';

export interface InitOptions {
  gtfs: string;
  feeds: Partial<Record<FeedRole, string>>;
  /** 'Name: value' each */
  headers: readonly string[];
  dir: string;
  id?: string;
  port: number;
  force: boolean;
  /** how the operator runs the CLI, for the commands printed at the end */
  program?: string;
}

export interface InitIO {
  out(line: string): void;
  err(line: string): void;
}

export const DEFAULT_DIR = 'data/agency';
export const CONFIG_NAME = 'transit.jsonc';
const ID = /^[a-z0-9][a-z0-9_-]{0,49}$/i;
// RFC 9110 token characters
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseHeaders(args: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const arg of args) {
    const colon = arg.indexOf(':');
    const name = colon === -1 ? '' : arg.slice(0, colon).trim();
    const value = colon === -1 ? '' : arg.slice(colon + 1).trim();
    if (!HEADER_NAME.test(name) || !value || /[\r\n]/.test(value)) {
      throw new UsageError(`--header takes 'Name: value' (e.g. --header 'X-Api-Key: …'), got ${JSON.stringify(arg)}`);
    }
    headers[name] = value;
  }
  return headers;
}

/** http(s):// as given; a path or file:// URL as an absolute file:// URL (what feeds[].url accepts). */
export function feedUrl(flag: string, arg: string): string {
  if (/^https?:\/\//i.test(arg)) return arg;
  if (/^file:\/\//i.test(arg)) return arg;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg))
    throw new UsageError(`--${flag} must be an http(s) URL, a file:// URL or a path, got ${arg}`);
  return pathToFileURL(resolve(arg)).href;
}

/** The routes' most common mode: the realtime endpoint the printed curl asks. */
function mainMode(index: LoadedScheduleIndex): Mode {
  const counts = new Map<Mode, number>();
  for (const route of index.routes()) if (route.mode) counts.set(route.mode, (counts.get(route.mode) ?? 0) + 1);
  return [...MODES].sort((a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0))[0]!;
}

/** A path as short as it can be said from here. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

const quote = (s: string): string => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);
const count = (n: number): string => n.toLocaleString('en-US');

function describeSchedule(imported: ImportedVersion, now: Date): { facts: string[]; warnings: string[] } {
  const { summary, version } = imported;
  const facts = [
    // a nested folder is worth saying; the name of a download is not
    `imported in ${Math.round(summary.ms)} ` +
      `ms${summary.location.includes(' inside ') ? ` (files in ${summary.location})` : ''}: ` +
      `${count(version.routes)} routes, ${count(version.trips)} trips, ` +
      `${count(version.stops)} stops, ${count(version.stop_times)} stop times (time zone ${summary.timezone})`,
    `service ${version.service_start_date} to ` +
      `${version.service_end_date}${summary.feed_version ? `, feed_version ${summary.feed_version}` : ''}`,
  ];
  const warnings = [...summary.warnings];
  const today = wallClock(now, summary.timezone).date;
  if (version.service_end_date && version.service_end_date < today) {
    warnings.push(
      `its service ended on ${version.service_end_date}: no trip is scheduled today, so realtime trips match nothing ` +
        `current and reliability has nothing to compare. Is there a newer GTFS?`,
    );
  } else if (version.service_start_date && version.service_start_date > today) {
    warnings.push(`its service starts on ${version.service_start_date}: no trip is scheduled before then`);
  }
  return { facts, warnings };
}

/** Files and folders init made, removed again when it refuses half way. */
class Created {
  private readonly paths: string[] = [];
  add(path: string): void {
    if (!existsSync(path)) this.paths.push(path);
  }
  undo(): void {
    for (const path of this.paths.reverse()) rmSync(path, { recursive: true, force: true });
  }
}

export async function runInit(options: InitOptions, io: InitIO, now: () => Date = () => new Date()): Promise<number> {
  // arguments first: nothing is fetched or written for a typo
  const headers = parseHeaders(options.headers);
  const sources: FeedSource[] = FEED_ROLES.flatMap((role) =>
    options.feeds[role] === undefined ? [] : [{ role, url: feedUrl(role, options.feeds[role]!), headers }],
  );
  if (options.id !== undefined && !ID.test(options.id)) {
    throw new UsageError(
      `--id takes letters, digits, - and _ (at most 50, starting with a letter or digit), got ` +
        `${JSON.stringify(options.id)}`,
    );
  }
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535) {
    throw new UsageError(`--port must be an integer from 1 to 65535, got ${options.port}`);
  }
  let source: string;
  try {
    source = scheduleSource(options.gtfs);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const dir = resolve(options.dir);
  const configPath = join(dir, CONFIG_NAME);
  const dbPath = join(dir, 'transit.duckdb');
  if (existsSync(configPath) && !options.force) {
    io.err(
      `refused: ${configPath} exists. init does not overwrite a config: it holds this deployment's signing_secret ` +
        `and feed settings. ` +
        'Pass --force to write a new one (its new signing_secret ends links and cursors already handed out), or ' +
        'choose another --dir.',
    );
    return 1;
  }
  if (existsSync(dbPath) && !options.force) {
    io.err(
      `refused: a database exists at ${dbPath} (an earlier init or service?). Pass --force to reuse it ` +
        '(the schedule is imported as a new version, another key is created, earlier keys stay valid), or ' +
        'choose another --dir.',
    );
    return 1;
  }

  io.out(`Checking the schedule ${source}`);
  let schedule: FetchedSchedule;
  try {
    schedule = await fetchSchedule(source);
  } catch (err) {
    if (!(err instanceof GtfsCheckError)) throw err;
    io.err(`refused: --gtfs ${err.message}`);
    return 1;
  }
  try {
    for (const s of sources)
      io.out(
        `Checking --${s.role} ` +
          `${s.url}${Object.keys(headers).length ? ` (with header ${Object.keys(headers).join(', ')})` : ''}`,
      );
    const fetched = await Promise.all(sources.map((s) => fetchFeed(s)));
    const refused = fetched.filter((f): f is Extract<FetchedFeed, { ok: false }> => !f.ok);
    for (const f of refused) io.err(`refused: --${f.source.role} ${f.source.url}: ${f.problem}`);
    if (refused.length) {
      io.err('nothing was written; fix the URLs above and run init again');
      return 1;
    }
    const id = options.id ?? slug(schedule.agency ?? '') ?? 'agency';
    return await setUp({
      options,
      io,
      now,
      dir,
      configPath,
      dbPath,
      source,
      schedule,
      id,
      feeds: fetched as Extract<FetchedFeed, { ok: true }>[],
    });
  } finally {
    await schedule.cleanup();
  }
}

interface SetUp {
  options: InitOptions;
  io: InitIO;
  now: () => Date;
  dir: string;
  configPath: string;
  dbPath: string;
  source: string;
  schedule: FetchedSchedule;
  id: string;
  feeds: Extract<FetchedFeed, { ok: true }>[];
}

async function setUp(s: SetUp): Promise<number> {
  const { options, io, id } = s;
  const plan: InitPlan = {
    agency: s.schedule.agency,
    host: '127.0.0.1',
    port: options.port,
    db_path: s.dbPath,
    exports_dir: join(s.dir, 'exports'),
    snapshot_path: join(s.dir, 'snapshot.duckdb'),
    signing_secret: randomBytes(32).toString('base64url'),
    schedule: { id, source: s.source, refresh_cron: SCHEDULE_DEFAULTS.refresh_cron },
    feeds: s.feeds.map((f) => ({
      id: `${id}-${f.source.role}`,
      role: f.source.role,
      kind: f.kind,
      url: f.source.url,
      interval_s: ROLE_INFO[f.source.role].interval_s,
      headers: f.source.headers,
      note: '',
    })),
    written_at: s.now(),
  };
  // the file init writes must be one serve accepts: validated before anything is created
  let config: Readonly<Config>;
  try {
    config = parseConfig(configObject(plan), {});
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(`init built an invalid config (a bug): ${err.message}`);
    throw err;
  }

  const created = new Created();
  created.add(s.dir);
  created.add(s.dbPath);
  created.add(`${s.dbPath}.wal`);
  created.add(`${s.dbPath}.tmp`);
  mkdirSync(s.dir, { recursive: true, mode: 0o700 });
  let db: Db;
  try {
    db = await Db.open(s.dbPath, dbOptions(config.store));
  } catch (err) {
    created.undo();
    if (!isLockError(err)) throw err;
    io.err(
      `refused: the database ${s.dbPath} is held by another process (a running service?): stop it first, or ` +
        `choose another --dir`,
    );
    return 1;
  }
  let key: string;
  let mode: Mode;
  try {
    let imported: ImportedVersion;
    try {
      imported = await importScheduleVersion(db, id, s.source, {
        localCopy: s.schedule.path,
        timezone: config.reliability.timezone,
        horizonDays: config.reliability.horizon_days,
      });
    } catch (err) {
      io.err(`refused: --gtfs ${s.source}: ${(err as Error).message}`);
      await db.close();
      created.undo();
      return 1;
    }
    const index = await loadScheduleIndex(db, id);
    mode = mainMode(index);
    const when = s.now();
    const described = describeSchedule(imported, when);
    io.out('');
    io.out(`schedule ${id}${s.schedule.agency ? ` (${s.schedule.agency})` : ''}: ${s.source}`);
    for (const line of described.facts) io.out(`  ${line}`);
    for (const line of described.warnings) io.out(`  warning: ${line}`);
    s.feeds.forEach((feed, i) => {
      const report = reportFeed(feed, index, config);
      const planned = plan.feeds[i]!;
      io.out('');
      io.out(`feed ${planned.id} (--${feed.source.role}): ${feed.source.url}`);
      for (const line of report.facts) io.out(`  ${line}`);
      for (const line of report.warnings) io.out(`  warning: ${line}`);
      const p = report.poll;
      const matched = p.matching ? `, ${p.matching.matched} of ${p.matching.trips} trips matched` : '';
      planned.note =
        `${ROLE_INFO[feed.source.role].entities}; checked ${utcDate(when.getTime())}: ${p.entities} ` +
        `${p.entities === 1 ? 'entity' : 'entities'}${matched}`;
    });
    if (s.feeds.length === 0) {
      io.out('');
      io.out(
        'no realtime feed given: the API serves the schedule only until feeds are added to the config (then `reload`)',
      );
    }
    const created_key = await createKey(db, { plan: 'max', name: 'first key (transit-api init)' });
    key = created_key.key;
    writeFileSync(s.configPath, renderConfig(plan), { mode: 0o600 });
    // an existing file (--force) keeps its mode on write
    chmodSync(s.configPath, 0o600);
    await db.close();
    io.out('');
    io.out(
      `wrote ${s.configPath} (mode 0600: it holds the signing ` +
        `secret${plan.feeds.some((f) => Object.keys(f.headers).length) ? ' and the feed headers' : ''})`,
    );
    io.out(`created API key ${created_key.id} (plan max). It is shown once, here, and stored only as a hash:`);
    io.out('');
    io.out(`  ${key}`);
  } catch (err) {
    await db.close().catch(() => undefined);
    created.undo();
    throw err;
  }
  const program = options.program ?? 'npx transit-api';
  const configArg = quote(shown(s.configPath));
  io.out('');
  io.out('Next:');
  io.out(`  ${program} serve --config ${configArg}`);
  io.out(`  curl -H "Authorization: Bearer ${key}" http://127.0.0.1:${options.port}/api/v1/${mode}/realtime`);
  io.out(`  ${program} status --config ${configArg}`);
  return 0;
}
