import { readFileSync } from 'node:fs';
import cron from 'node-cron';
import { z } from 'zod';
import { isLogLevel, LOG_LEVELS } from './logger.ts';
import { isTimeZone } from './dates.ts';
import { stripJsonComments } from './jsonc.ts';
import { EXPORT_DATASETS, EXPORT_FORMATS, MATCH_STRATEGIES, MODES } from './types.ts';

// One schema for the whole service. Units are in the key names; every default is here, once: a
// section left out is parsed as {} (prefault), so its keys take their own defaults.

const feedId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/i, 'letters, digits, - and _ only');
/** DuckDB's size units, or a percentage of RAM (converted to bytes at open) */
const MEMORY_LIMIT = /^(\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)|\d+(\.\d+)?%)$/;
const feedUrl = z.string().refine((u) => /^(https?|file):\/\//.test(u), 'must be an http(s):// or file:// URL');

export const FeedSchema = z
  .object({
    id: feedId,
    kind: z.enum(['gtfs-rt', 'alerts-json']),
    url: feedUrl,
    interval_s: z.number().positive().max(86_400).default(15),
    timeout_s: z.number().positive().max(300).default(10),
    max_bytes: z
      .number()
      .int()
      .positive()
      .default(50 * 1024 * 1024),
    /** ceiling of the jittered exponential backoff after failed polls */
    backoff_max_s: z.number().positive().max(86_400).default(300),
    /** IANA zone for service dates when the feed has no schedule (else the agency's zone) */
    timezone: z.string().refine(isTimeZone, 'unknown IANA time zone').optional(),
    /** static schedule used to resolve trips and stops of this feed */
    schedule_id: z.string().optional(),
    /**
     * mode of the feed's vehicles, trips and arrivals whose route the schedule does not know (or
     * every one of them when the feed has no schedule), so they appear under that mode's endpoints
     */
    mode: z.enum(MODES).optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /**
     * how realtime trips are found in the schedule: `auto` (exact, then nyct for NYCT-style ids,
     * then start, then nyct_loose), one strategy, or strategies in the order to try them (docs/guides/real-feeds.md,
     * trip matching)
     */
    trip_matching: z
      .union([z.literal('auto'), z.enum(MATCH_STRATEGIES), z.array(z.enum(MATCH_STRATEGIES)).min(1)])
      .default('auto'),
    /**
     * route ids the feed writes otherwise than its schedule, feed's → schedule's (NYCT subway:
     * {"S": "GS", "5X": "5"}); applied to trip descriptors before trip matching and to the route stored
     */
    route_aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
    /**
     * store snapshots whose header is older than freshness.max_age_days, with their own service
     * dates (archives, a feed stuck on an old file); off: such snapshots are rejected whole
     */
    allow_old_snapshots: z.boolean().default(false),
    /**
     * gtfs-rt: whether the feed carries service alerts, so the status page counts it as an alert
     * source from its first poll (0 alerts is operational, a failing feed is down); unset: a feed
     * whose id or URL says "alert" does, as does any feed once it delivers an alert
     */
    alerts: z.boolean().optional(),
  })
  .strict();

/**
 * Whether a feed is an alert source before it delivered anything: every alerts-json feed, and a
 * gtfs-rt feed its `alerts` key (or else its id or URL: alerts.pb, service-alerts, ?type=alerts) names so.
 */
export function isAlertFeed(feed: Pick<FeedConfig, 'kind' | 'id' | 'url' | 'alerts'>): boolean {
  if (feed.kind === 'alerts-json') return true;
  if (feed.alerts !== undefined) return feed.alerts;
  let path = '';
  try {
    const url = new URL(feed.url);
    path = url.pathname + url.search;
  } catch {
    // the schema checked the scheme; a URL that does not parse names nothing
  }
  return /alert/i.test(feed.id) || /alert/i.test(path);
}

/**
 * The schedule a feed's trips, stops and routes are looked up in, and its ids belong to: its own
 * `schedule_id`, or the only schedule when exactly one is configured; null without one.
 */
export function feedScheduleId(
  config: { readonly schedules: readonly { readonly id: string }[] },
  feed: { readonly schedule_id?: string | undefined },
): string | null {
  if (feed.schedule_id) return feed.schedule_id;
  return config.schedules.length === 1 ? config.schedules[0]!.id : null;
}

const cronExpression = z
  .string()
  .refine((c) => cron.validate(c), 'not a valid cron expression (minute hour day month weekday)');

export const ScheduleSchema = z
  .object({
    id: feedId,
    /** zip path, folder path, file:// or http(s):// URL */
    source: z.string().min(1),
    /**
     * node-cron expression (agency time zone) for re-fetching the source: a conditional GET and a
     * content hash, so an unchanged file is not imported again; a changed one is swapped in
     */
    refresh_cron: cronExpression.default('41 3 * * *'),
    /**
     * what the schedule's ids are prefixed with where they collide with another schedule's
     * (`<prefix>:<id>`, docs/guides/api.md "Ids across agencies"); default: the schedule id
     */
    id_prefix: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/i, 'letters, digits, - and _ only')
      .optional(),
  })
  .strict();

export const ConfigSchema = z
  .object({
    port: z.number().int().min(0).max(65_535).default(8080),
    /**
     * listen address (--host overrides it): 127.0.0.1 answers this machine only (a reverse proxy on it); 0.0.0.0 or ::
     * every interface
     */
    host: z.string().min(1).default('127.0.0.1'),
    db_path: z.string().default('data/transit.duckdb'),
    public_base_url: z.string().url().optional(),
    /** TRANSIT_LOG_LEVEL and --log-level override it */
    log_level: z.enum(LOG_LEVELS).default('info'),
    feeds: z.array(FeedSchema).default([]),
    schedules: z.array(ScheduleSchema).default([]),
    freshness: z
      .object({
        stale_after_s: z.number().positive().default(90),
        expired_after_s: z.number().positive().default(300),
        /** a snapshot whose header is further ahead of this server's clock is rejected whole (timestamp_future) */
        max_future_s: z.number().nonnegative().default(300),
        /** a snapshot whose header is older is rejected whole (timestamp_too_old) unless feeds[].allow_old_snapshots */
        max_age_days: z.number().positive().default(365),
      })
      .strict()
      .prefault({}),
    delay: z
      .object({
        early_below_s: z.number().default(-60),
        late_above_s: z.number().default(300),
      })
      .strict()
      .prefault({}),
    retention_days: z
      .object({
        vehicle_positions: z.number().int().positive().default(7),
        arrivals: z.number().int().positive().default(30),
        trip_observations: z.number().int().positive().default(400),
        alerts: z.number().int().positive().default(400),
        feed_polls: z.number().int().positive().default(30),
        usage: z.number().int().positive().default(400),
        stop_events: z.number().int().positive().default(400),
      })
      .strict()
      .prefault({}),
    /** node-cron expression for pruning history past its retention window */
    prune_cron: cronExpression.default('17 3 * * *'),
    /** change-only history (store/SCHEMA.md "Change-only history") */
    history: z
      .object({
        /** a prediction is stored again once it moved at least this far (or its delay state or relationship changed) */
        prediction_change_s: z.number().int().min(0).default(30),
        /**
         * a trip or vehicle unseen this long in its feed is closed with what is known: its held rows
         * and its stop events are written, its memory freed
         */
        trip_timeout_s: z.number().int().min(60).max(86_400).default(900),
      })
      .strict()
      .prefault({}),
    webhooks: z
      .object({
        allow_private_targets: z.boolean().default(false),
        timeout_ms: z.number().int().positive().default(15_000),
        max_concurrency: z.number().int().positive().default(32),
        max_concurrency_per_endpoint: z.number().int().positive().default(4),
      })
      .strict()
      .prefault({}),
    sse: z
      .object({
        max_connection_s: z.number().int().positive().default(3_600),
        buffer_bytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        ping_interval_s: z.number().positive().default(15),
        /** most events the resume log retains (a cap on its index; bytes and age usually bind first) */
        event_log_size: z.number().int().positive().default(100_000),
        /** the resume log (memory and its DuckDB table) drops its oldest events past this many payload bytes */
        event_log_max_bytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        /** … and events older than this; a Last-Event-ID older than what is kept gets `reset` */
        event_log_max_age_s: z.number().int().positive().default(3_600),
        /** under load, frames due within this window are written to each subscriber in one write */
        coalesce_ms: z.number().int().nonnegative().max(1_000).default(10),
        /**
         * bytes all event streams together (keyed and /status/stream) may hold unsent; past it the longest-stalled are
         * cut
         */
        send_budget_bytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        /** a stream whose unsent bytes made no progress for this long is cut (it resumes by Last-Event-ID) */
        stall_timeout_s: z.number().positive().max(3_600).default(20),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        /**
         * DuckDB's memory limit: a size (`512MB`, `1GB`, `2GiB`) or a share of the machine's RAM (`25%`); past it
         * DuckDB spills to `<db_path>.tmp`
         */
        memory_limit: z
          .string()
          .regex(MEMORY_LIMIT, 'a size such as 512MB, 1GB, 2GiB, or a share of RAM such as 25%')
          .refine(
            (v) => !v.endsWith('%') || (Number.parseFloat(v) > 0 && Number.parseFloat(v) <= 100),
            'a share of RAM above 0% and at most 100%',
          )
          .default('1GB'),
        /** DuckDB worker threads; absent: one per CPU core */
        threads: z.number().int().min(1).max(256).optional(),
      })
      .strict()
      .prefault({}),
    exports: z
      .object({
        enabled: z.boolean().default(true),
        dir: z.string().default('data/exports'),
        /** node-cron expression (agency time zone) for the daily export of the last finished service day */
        cron: cronExpression.default('30 4 * * *'),
        url_ttl_s: z.number().int().positive().default(3_600),
        datasets: z
          .array(z.enum(EXPORT_DATASETS))
          .min(1)
          .default([...EXPORT_DATASETS]),
        formats: z
          .array(z.enum(EXPORT_FORMATS))
          .min(1)
          .default([...EXPORT_FORMATS]),
        /** failed files of this many recent service days are retried by the daily job */
        retry_days: z.number().int().min(0).max(400).default(7),
        /** attempts per file before the daily job stops retrying it */
        max_attempts: z.number().int().min(1).max(100).default(3),
      })
      .strict()
      .prefault({}),
    snapshot: z
      .object({
        enabled: z.boolean().default(true),
        path: z.string().default('data/snapshot.duckdb'),
        /** node-cron expression (server time) for rewriting the analyst snapshot at `path` */
        cron: cronExpression.default('*/15 * * * *'),
      })
      .strict()
      .prefault({}),
    api: z
      .object({
        /**
         * how long a cached API key is trusted before the database is asked again (revocations):
         * each interval one query reads the key table's fingerprints, one per sixteenth of the
         * keys, and the cached keys of a sixteenth are read back only when its fingerprint moved
         * (a key of it created, revoked or moved to another plan)
         */
        key_recheck_ms: z.number().int().positive().default(2_000),
        /** usage rows are buffered in memory and appended to DuckDB at this interval */
        meter_flush_ms: z.number().int().positive().default(1_000),
        /** a flush starts early when this many usage rows are buffered */
        meter_batch_rows: z.number().int().positive().default(10_000),
        max_body_bytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
        /** serialized response bodies kept per normalized query (LRU) */
        response_cache_entries: z.number().int().positive().default(2_000),
        /** graceful shutdown waits this long for in-flight requests */
        shutdown_timeout_ms: z.number().int().positive().default(10_000),
        /** the route/station directory is reloaded from the store at this interval */
        directory_refresh_s: z.number().int().positive().default(300),
      })
      .strict()
      .prefault({}),
    reliability: z
      .object({
        /** agency time zone for service days; absent: the imported schedule's agency_timezone, else UTC */
        timezone: z.string().refine(isTimeZone, 'unknown IANA time zone').optional(),
        /** node-cron expression (agency time zone) for the job that finalizes finished service days */
        finalize_cron: cronExpression.default('5 * * * *'),
        /** local time on D + 1 until which service day D is still running (trips past midnight) */
        service_day_end: z
          .string()
          .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM')
          .default('04:00'),
        /** minutes after a day's last scheduled arrival before it may be finalized */
        late_grace_min: z
          .number()
          .int()
          .nonnegative()
          .max(24 * 60)
          .default(60),
        /** days ahead for which scheduled trips are expanded */
        horizon_days: z.number().int().min(1).max(366).default(7),
        /** how far back the job looks for service days it has not finalized yet */
        catch_up_days: z.number().int().min(1).max(400).default(14),
      })
      .strict()
      .prefault({}),
    performance: z
      .object({
        /** an arrival delay within [early, late] seconds is on time (negative: early) */
        on_time_window_s: z.tuple([z.number().int().max(0), z.number().int().min(0)]).default([-60, 300]),
        /** a performance figure from fewer observations is null, with a note saying so */
        min_observations: z.number().int().min(1).default(10),
      })
      .strict()
      .prefault({}),
    status: z
      .object({
        /** how often component states are re-evaluated from feed health, request figures and the clock */
        tick_ms: z.number().int().min(50).max(10_000).default(500),
        /** a feed is down after this many consecutive failed polls */
        down_after_failures: z.number().int().min(1).default(2),
        /** … or when no poll succeeded for this many of its poll intervals (covers polls that hang) */
        down_after_intervals: z.number().positive().default(2),
        /** webhook outbox depth is re-read from the store at this interval */
        outbox_refresh_s: z.number().positive().default(5),
        /** public API: share of 5xx answers over the last 5 minutes that marks it degraded, and down */
        api_degraded_error_pct: z.number().min(0).max(100).default(5),
        api_down_error_pct: z.number().min(0).max(100).default(50),
        /** … judged only once the window holds this many requests */
        api_min_requests: z.number().int().min(1).default(20),
        /** p99 latency over the last 5 minutes above this marks the API degraded */
        api_degraded_p99_ms: z.number().positive().default(2_000),
        /** concurrent /status/stream viewers; more are refused with 503 */
        max_viewers: z.number().int().positive().default(1_000),
        /** days of incident history shown */
        history_days: z.number().int().min(1).max(90).default(7),
        /** state changes older than this are deleted from the store */
        retention_days: z.number().int().min(1).default(90),
      })
      .strict()
      .prefault({}),
    admin: z
      .object({
        /** operator commands reach the running service through this Unix socket (mode 0600) */
        enabled: z.boolean().default(true),
        /** socket path; default: db_path plus `.sock` */
        socket: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        /**
         * a separate listener serving GET /metrics (Prometheus text format) for a scraper; unset: only on the admin
         * socket
         */
        port: z.number().int().min(0).max(65_535).optional(),
        /** keep it on loopback unless the scraper is elsewhere and the port is firewalled */
        host: z.string().min(1).default('127.0.0.1'),
      })
      .strict()
      .prefault({}),
    /**
     * what this process runs (serve --role): all (one process), ingest (pipeline and database), edge (REST and SSE
     * only)
     */
    role: z.enum(['all', 'ingest', 'edge']).default('all'),
    broker: z
      .object({
        /**
         * redis://[user:password@]host:port[/db] shared by an ingest node and its edges (docs/guides/multi-node.md);
         * unset: one process, no broker
         */
        url: z
          .string()
          .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
          .optional(),
        /** every key the service writes in Redis starts with this, so deployments can share one */
        prefix: z.string().min(1).default('transit:'),
        /** an event stream's allowance lease expires this long after its node stops renewing it (a node that died) */
        lease_ttl_s: z.number().int().min(3).max(3600).default(30),
        /**
         * ingest node: the base URL edges reach it at, announced in the broker; default http://<host>:<port>
         * (127.0.0.1 for host 0.0.0.0)
         */
        advertise_url: z
          .string()
          .regex(/^https?:\/\/[^/?#]+\/?$/, 'must be http(s)://host[:port]')
          .optional(),
        /** deprecated: the same as ingest.url (which wins when both are set) */
        ingest_url: z
          .string()
          .regex(/^https?:\/\/[^/?#]+\/?$/, 'must be http(s)://host[:port]')
          .optional(),
        /** edge node: a forwarded request with no answer head within this is 503 ingest_unavailable */
        forward_timeout_ms: z.number().int().min(100).max(600_000).default(10_000),
      })
      .strict()
      .prefault({}),
    ingest: z
      .object({
        /**
         * edge node: the ingest node's base URL, used for the paths edges forward and to check it answers, with the
         * broker up or down; unset: the address the ingest node announces in the broker
         */
        url: z
          .string()
          .regex(/^https?:\/\/[^/?#]+\/?$/, 'must be http(s)://host[:port]')
          .optional(),
      })
      .strict()
      .prefault({}),
    /**
     * secret for signed URLs and cursors, and the key (HKDF) that encrypts webhook secrets in the
     * database; absent: generated on first start into `<db_path>.secret` (0600) and read from there
     */
    signing_secret: z.string().min(16).optional(),
    /**
     * signing secrets replaced by signing_secret: webhook secrets encrypted with one are
     * re-encrypted with signing_secret at start, after which it can be removed (docs/guides/operating.md, Files and
     * permissions)
     */
    previous_signing_secrets: z.array(z.string().min(16)).default([]),
  })
  .strict()
  .refine((c) => c.role === 'all' || c.broker.url !== undefined, {
    message: 'an ingest or edge role needs broker.url (redis://…) to reach the other nodes',
    path: ['broker', 'url'],
  });

export type Config = z.infer<typeof ConfigSchema>;

/**
 * The ingest node's base URL an edge is configured with (ingest.url, or the older broker.ingest_url), no trailing
 * slash.
 */
export function configuredIngestUrl(config: Readonly<Pick<Config, 'ingest' | 'broker'>>): string | null {
  const url = config.ingest.url ?? config.broker.ingest_url;
  return url ? url.replace(/\/+$/, '') : null;
}
export type FeedConfig = z.infer<typeof FeedSchema>;
export type ScheduleConfig = z.infer<typeof ScheduleSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Validates once and freezes; every problem is listed by its path. */
export function parseConfig(raw: unknown, env: NodeJS.ProcessEnv = {}): Readonly<Config> {
  const input: Record<string, unknown> = { ...((raw ?? {}) as Record<string, unknown>) };
  const problems: string[] = [];
  if (env.TRANSIT_PORT !== undefined) {
    const port = Number(env.TRANSIT_PORT);
    if (!Number.isInteger(port)) problems.push(`TRANSIT_PORT: not an integer: ${JSON.stringify(env.TRANSIT_PORT)}`);
    else input.port = port;
  }
  if (env.TRANSIT_DB) input.db_path = env.TRANSIT_DB;
  if (env.TRANSIT_LOG_LEVEL) {
    if (isLogLevel(env.TRANSIT_LOG_LEVEL)) input.log_level = env.TRANSIT_LOG_LEVEL;
    else
      problems.push(
        `TRANSIT_LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(env.TRANSIT_LOG_LEVEL)}`,
      );
  }
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
    }
  }
  if (parsed.success) {
    const ids = new Set<string>();
    parsed.data.feeds.forEach((feed, i) => {
      if (ids.has(feed.id)) problems.push(`feeds.${i}.id: duplicate feed id ${JSON.stringify(feed.id)}`);
      ids.add(feed.id);
    });
    // a served id `p:x` must name one schedule: prefixes (an id_prefix, else the id) are unique
    const prefixes = new Map<string, string>();
    parsed.data.schedules.forEach((schedule, i) => {
      const prefix = schedule.id_prefix ?? schedule.id;
      const other = prefixes.get(prefix);
      if (other !== undefined)
        problems.push(
          `schedules.${i}.${schedule.id_prefix ? 'id_prefix' : 'id'}: prefix ${JSON.stringify(prefix)} is schedule ` +
            `${JSON.stringify(other)}'s already`,
        );
      else prefixes.set(prefix, schedule.id);
    });
    if (parsed.data.freshness.expired_after_s <= parsed.data.freshness.stale_after_s) {
      problems.push('freshness.expired_after_s: must be greater than stale_after_s');
    }
  }
  if (problems.length || !parsed.success) throw new ConfigError(problems);
  return deepFreeze(parsed.data);
}

/** The config file named by `--config`, else TRANSIT_CONFIG; undefined when neither is set. */
export function configFile(path: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return path ?? (env.TRANSIT_CONFIG || undefined);
}

/** The file's JSON as written (no defaults, no validation; line and block comments allowed); {} without a file. */
export function readConfigFile(file: string | undefined): unknown {
  if (!file) return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`config file ${file}: ${(err as Error).message}`]);
  }
  try {
    return JSON.parse(stripJsonComments(text));
  } catch (err) {
    throw new ConfigError([`config file ${file}: not valid JSON: ${(err as Error).message}`]);
  }
}

/** Reads `--config`/TRANSIT_CONFIG (a JSON file) and applies env overrides. */
export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  return parseConfig(readConfigFile(configFile(path, env)), env);
}

/**
 * Every default, as the schema gives it: code that runs without a config (the OpenAPI catalog,
 * a lookup before the config is read, an option left out) reads these rather than repeat a value.
 */
export const DEFAULT_CONFIG: Readonly<Config> = parseConfig({});

/**
 * The defaults of a feed's keys (timeout, size limit, backoff …), for code that fetches a feed as the service would.
 */
export const FEED_DEFAULTS = deepFreeze(FeedSchema.omit({ id: true, kind: true, url: true }).parse({}));

/** The defaults of a schedule's keys (its refresh_cron). */
export const SCHEDULE_DEFAULTS = deepFreeze(ScheduleSchema.omit({ id: true, source: true }).parse({}));

/** The admin socket of the service on this config's database; null when it has none. */
export function adminSocketPath(config: Pick<Readonly<Config>, 'admin' | 'db_path'>): string | null {
  if (!config.admin.enabled) return null;
  if (config.admin.socket) return config.admin.socket;
  return config.db_path === ':memory:' ? null : `${config.db_path}.sock`;
}
