// The calling key's own account: its plan and limits, the rate window right now, its open event
// streams and its usage per day. The developer dashboard reads these. They need a key but are
// not metered and never count against the window, so watching the dashboard costs nothing.
import { z } from 'zod';
import { componentLogger, type Logger } from '../../core/logger.ts';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import type { ConnectionMeter } from '../../stream/connection-meter.ts';
import { MAX_ENDPOINTS_PER_KEY } from '../../webhooks/index.ts';
import type { AuthenticatedKey } from '../../accounts/auth.ts';
import { keyStates } from '../../accounts/keys.ts';
import type { RateLimiter } from '../../accounts/limiter.ts';
import type { Meter } from '../../accounts/meter.ts';
import { intParam } from '../params.ts';
import { PLAN_LIMITS, PLANS, WINDOW_MS } from '../../accounts/plans.ts';
import { dailyUsage, USAGE_DAYS_DEFAULT, USAGE_DAYS_MAX } from '../../accounts/usage.ts';
import { defineRoute } from '../route.ts';
import type { StreamTag } from '../sse-routes.ts';
import type { RequestContext, RouteDef } from '../types.ts';
import { PREFIX } from './deps.ts';
import { timestamp } from './schemas.ts';
import { isoRequired } from '../../core/dates.ts';

const TAGS = ['Account'];
const MINUTE_MS = 60_000;

/** One open event stream of a key. */
export interface OpenStream {
  /** route template of the stream */
  readonly endpoint: string;
  readonly openedAtMs: number;
}

/** The open event streams of a key, oldest first. */
export interface OpenStreamsView {
  openFor(keyId: string): readonly OpenStream[];
}

/** The view over the connection-minute meter of app/fanout.ts (`streaming.connections`). */
export function connectionStreamsView(connections: Pick<ConnectionMeter<StreamTag>, 'openWhere'>): OpenStreamsView {
  return {
    openFor(keyId) {
      return connections
        .openWhere((tag) => tag.keyId === keyId)
        .map(({ tag, openedAtMs }) => ({ endpoint: tag.endpoint, openedAtMs }));
    },
  };
}

export interface AccountRouteDeps {
  db: Db;
  /** the limiter the API enforces (createApi({ limiter })): the window is read from it */
  limiter: RateLimiter;
  /** the API's meter: flushed before usage is read, so the latest calls show */
  meter?: Meter;
  /** absent: no event streams on this server (open: 0) */
  streams?: OpenStreamsView;
  log?: Logger;
}

const count = (description: string) => z.number().int().min(0).meta({ description });

export const AccountKeySchema = z
  .object({
    id: z
      .string()
      .meta({ description: 'Key id (usage rows and the operator CLI name it).', example: 'key_3f9a1c0d2b4e6f80' }),
    prefix: z
      .string()
      .meta({ description: 'The first characters of the key, enough to recognise it.', example: 'tk_live_AbCd' }),
    name: z.string().nullable().meta({ description: 'Name given at creation; null when none was.' }),
    test: z
      .boolean()
      .meta({ description: 'A test key (`tk_test_…`): same limits, usage kept apart, no bulk history.' }),
    created_at: timestamp('When the key was created.'),
  })
  .meta({ id: 'AccountKey', description: 'The key making the call. The key itself is never shown again.' });

export const AccountLimitsSchema = z
  .object({
    requests_per_window: count('Requests allowed in any sliding window of `window_seconds`.'),
    window_seconds: count('Length of the sliding rate-limit window.'),
    sse_streams: count('Event streams this key may hold open at once.'),
    max_page_size: count('Largest `limit` a list request may ask for.'),
    history_exports: z
      .boolean()
      .meta({ description: 'Whether `/api/v1/history/exports` is open to this key: Max plan live keys only.' }),
    webhook_endpoints: count('Webhook endpoints this key may register.'),
  })
  .meta({ id: 'AccountLimits', description: 'What the plan allows this key.' });

export const AccountWindowSchema = z
  .object({
    limit: count('Requests allowed in the window.'),
    remaining: count('Requests left in the window right now.'),
    reset_seconds: count('Seconds until the oldest counted request leaves the window; 0 when none is counted.'),
  })
  .meta({
    id: 'AccountWindow',
    description: 'The rate-limit window as of this call (the same figures as the RateLimit headers).',
  });

export const AccountStreamSchema = z
  .object({
    endpoint: z.string().meta({ description: 'Route template of the stream.', example: '/api/v1/events/stream' }),
    opened_at: timestamp('When the stream was opened.'),
    minutes: count('Connection-minutes started so far (a minute counts as soon as it starts).'),
  })
  .meta({ id: 'AccountStream' });

export const AccountStreamsSchema = z
  .object({
    open: count('Event streams of this key open on this server now.'),
    allowed: count("The plan's allowance of concurrent streams."),
    connections: z.array(AccountStreamSchema).meta({ description: 'The open streams, oldest first.' }),
  })
  .meta({ id: 'AccountStreams' });

export const AccountSchema = z
  .object({
    key: AccountKeySchema,
    plan: z.enum(PLANS).meta({ description: "The key's plan." }),
    limits: AccountLimitsSchema,
    window: AccountWindowSchema,
    streams: AccountStreamsSchema,
  })
  .meta({ id: 'Account' });

const figures = {
  requests: count('Metered requests, whatever their status (429s included).'),
  connection_minutes: count('Started minutes of event streams.'),
  errors: count('Requests answered with a status of 400 or more.'),
};

export const UsageTotalsSchema = z
  .object(figures)
  .meta({ id: 'UsageTotals', description: 'Sums over the days listed.' });

export const UsageDaySchema = z
  .object({
    date: z.iso.date().meta({ description: 'UTC calendar day.', example: '2024-05-01' }),
    ...figures,
  })
  .meta({ id: 'UsageDay' });

export const AccountUsageSchema = z
  .object({
    from: z.iso.date().meta({ description: 'First day listed (UTC).' }),
    to: z.iso.date().meta({ description: 'Last day listed: today (UTC).' }),
    unit_timezone: z.literal('UTC').meta({ description: 'Days are UTC calendar days.' }),
    days: z
      .array(UsageDaySchema)
      .meta({ description: 'One entry per day from `from` to `to`, oldest first; days without usage are zeros.' }),
    totals: UsageTotalsSchema,
  })
  .meta({ id: 'AccountUsage' });

function callingKey(ctx: Pick<RequestContext, 'key'>): AuthenticatedKey {
  // auth: 'key' routes never reach a handler without one; guard against a table mistake
  if (!ctx.key) throw new Error('account route reached without an authenticated key');
  return ctx.key;
}

/** Started minutes as the connection meter bills them: a minute counts as soon as it starts. */
function startedMinutes(openedAtMs: number, nowMs: number): number {
  return Math.floor(Math.max(0, nowMs - openedAtMs) / MINUTE_MS) + 1;
}

async function account(deps: AccountRouteDeps, ctx: RequestContext): Promise<z.input<typeof AccountSchema>> {
  const key = callingKey(ctx);
  const record = (await keyStates(deps.db, [key.id])).get(key.id);
  // deleted between authentication and this read (the auth cache keeps keys for seconds)
  if (!record) throw new ApiError('unauthorized', 'The API key is not valid: it is unknown, malformed or revoked.');
  const limits = PLAN_LIMITS[key.plan];
  const window = await deps.limiter.peek(key.id, key.plan, ctx.nowMs);
  const open = deps.streams?.openFor(key.id) ?? [];
  return {
    key: { id: key.id, prefix: record.prefix, name: record.name, test: key.test, created_at: record.created_at },
    plan: key.plan,
    limits: {
      requests_per_window: limits.requests_per_window,
      window_seconds: WINDOW_MS / 1000,
      sse_streams: limits.sse_streams,
      max_page_size: limits.max_page_size,
      history_exports: key.plan === 'max' && !key.test,
      webhook_endpoints: MAX_ENDPOINTS_PER_KEY,
    },
    window: { limit: window.limit, remaining: window.remaining, reset_seconds: Math.ceil(window.resetMs / 1000) },
    streams: {
      open: open.length,
      allowed: limits.sse_streams,
      connections: open.map((s) => ({
        endpoint: s.endpoint,
        opened_at: isoRequired(s.openedAtMs),
        minutes: startedMinutes(s.openedAtMs, ctx.nowMs),
      })),
    },
  };
}

const usageQuery = z.object({
  days: intParam({
    description: `Days to list, today (UTC) included: 1 to ${USAGE_DAYS_MAX}, default ${USAGE_DAYS_DEFAULT}.`,
    min: 1,
    max: USAGE_DAYS_MAX,
    default: USAGE_DAYS_DEFAULT,
  }).optional(),
});

const USAGE_REUSE_MS = 5_000;
const USAGE_REUSE_ENTRIES = 10_000;

/** GET /api/v1/account and /api/v1/account/usage, for createApi({ routes }). */
export function accountRoutes(deps: AccountRouteDeps): RouteDef[] {
  const log = componentLogger(deps.log, 'account');
  const recentUsage = new Map<
    string,
    { token: string; atMs: number; report: Promise<z.input<typeof AccountUsageSchema>> }
  >();

  const get = defineRoute({
    id: 'getAccount',
    method: 'GET',
    path: `${PREFIX}/account`,
    summary: "The calling key's plan, limits and open streams",
    description:
      'The key making the call (never the key itself), its plan and what the plan allows, the rate-limit window as ' +
      'of this call, and the event streams the key holds open on this server with the connection-minutes ' +
      'each has started.',
    tags: TAGS,
    auth: 'key',
    meter: null,
    response: AccountSchema,
    handler: (ctx) => account(deps, ctx),
  });

  const usage = defineRoute({
    id: 'getAccountUsage',
    method: 'GET',
    path: `${PREFIX}/account/usage`,
    summary: "The calling key's usage per day",
    description:
      'Metered requests, connection-minutes and error responses of the calling key per UTC day, today included, ' +
      'oldest first, with days without usage as zeros. Test keys see their own (test) usage. Calls are metered in ' +
      'batches; the batch is written before the figures are read, so the calls made just before show.',
    tags: TAGS,
    auth: 'key',
    meter: null,
    query: usageQuery,
    response: AccountUsageSchema,
    async handler(ctx) {
      const key = callingKey(ctx);
      const days = ctx.query.days ?? USAGE_DAYS_DEFAULT;
      // the call is free, so a client looping on it must not turn into a loop of flushes and
      // DuckDB scans: the same answer is reused for a few seconds unless the key made a metered
      // call since (its window's remaining count moved), so fresh usage still shows at once
      const window = await deps.limiter.peek(key.id, key.plan, ctx.nowMs);
      const token = `${days}|${window.remaining}`;
      const cached = recentUsage.get(key.id);
      if (cached && cached.token === token && ctx.nowMs - cached.atMs < USAGE_REUSE_MS) return cached.report;
      const report = readUsage(key, days, ctx.nowMs);
      if (recentUsage.size >= USAGE_REUSE_ENTRIES) recentUsage.delete(recentUsage.keys().next().value as string);
      recentUsage.set(key.id, { token, atMs: ctx.nowMs, report });
      report.catch(() => recentUsage.delete(key.id));
      return report;
    },
  });

  async function readUsage(
    key: AuthenticatedKey,
    days: number,
    nowMs: number,
  ): Promise<z.input<typeof AccountUsageSchema>> {
    if (deps.meter) {
      // stale figures beat no figures: the rows still pending are written by the next flush
      try {
        await deps.meter.flush();
      } catch (err) {
        log.error({ err }, 'usage flush before the account usage read failed');
      }
    }
    const report = await dailyUsage(deps.db, { keyId: key.id, test: key.test, days, nowMs });
    return { ...report, unit_timezone: 'UTC' as const };
  }

  return [get, usage];
}
