// The pipeline's wiring: fetch → decode → normalize → state + events + history, for every feed.
import { performance } from 'node:perf_hooks';
import { interval, type SchedulerLike, type Subscription, asyncScheduler } from 'rxjs';
import { feedScheduleId, type Config, type FeedConfig } from '../core/config.ts';
import type { EventBus } from '../core/events.ts';
import type { ServedIds } from '../core/served-ids.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { HistoryBatch, HistoryWriter, ScheduleIndex, SnapshotRecord, WrittenTrip } from '../core/ports.ts';
import { HistoryQueue, HISTORY_QUEUE_POLLS, type HistoryQueueFigures } from './history-queue.ts';
import { newPoll, type Alert, type FeedPoll, type StopEvent, type StopEventCounts } from '../core/types.ts';
import { normalizeAlertsJson } from './alerts-json.ts';
import { decodeFeedMessage } from './decode.ts';
import { FeedFetcher, fetchBody, sha256, type FetchFn } from './fetch-feed.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage, type NormalizedPoll } from './normalize-feed.ts';
import { pollFeeds } from './poller.ts';
import { FeedQualityChecker, NOT_A_FEED } from './quality/checker.ts';
import { snapshotProblem } from './snapshot-verdict.ts';
import { TripMatcher } from './trip-matching/match.ts';
import { LiveState } from './state.ts';
import { StopEventTracker } from './stop-events/tracker.ts';

export interface PipelineOptions {
  config: Readonly<Config>;
  bus: EventBus;
  history: HistoryWriter;
  scheduleFor: (feed: FeedConfig) => ScheduleIndex | undefined;
  initialAlerts?: readonly Alert[];
  now?: () => number;
  log?: Logger;
  /** replaces the http/file fetcher (tests) */
  fetch?: FetchFn;
  /** times polls, backoff and the freshness tick (tests pass a virtual-time scheduler) */
  scheduler?: SchedulerLike;
  random?: () => number;
  /** how often freshness and alert periods are re-evaluated without a poll */
  tick_ms?: number;
  /** every poll's record, once it is written (metrics) */
  onPoll?: (poll: FeedPoll) => void;
  /** polls whose history may wait to be stored before polling pauses (default HISTORY_QUEUE_POLLS) */
  history_queue_polls?: number;
  /** trips whose stop events are stored already (store/stop-events-writer.ts loadWrittenTrips) */
  written_trips?: readonly WrittenTrip[];
  /** the ids events carry (core/served-ids.ts); default: as stored */
  servedIds?: () => ServedIds;
}

export interface Pipeline {
  state: LiveState;
  start(): void;
  stop(): Promise<void>;
  /** One poll now; resolves once its history is stored (the live state moved before that). */
  pollOnce(feedId: string): Promise<FeedPoll>;
  pollAllOnce(): Promise<FeedPoll[]>;
  /** The history queue now: batches waiting, capacity and the oldest one's wait (metrics). */
  historyQueue(): HistoryQueueFigures;
  /** the feeds polled now, in the order they were added */
  feeds(): readonly FeedConfig[];
  /** Polls a new feed, or a known one with new settings (config reload); its poller restarts at once. */
  upsertFeed(feed: FeedConfig): void;
  /** Stops polling a feed, waits for its poll in flight and drops its entities from the live state. */
  removeFeed(feedId: string): Promise<void>;
  /**
   * An archived snapshot of a feed through the same path as a poll (normalize → state → history),
   * as if polled at `observed_ms` (its header time for a replay). Not while that feed is polled.
   */
  ingestSnapshot(feedId: string, body: Uint8Array, options: { observed_ms: number }): Promise<FeedPoll>;
  /**
   * ingestSnapshot up to the live state: resolves once the snapshot is live and the history
   * queue has room, with `stored` for its history (a replay goes on with the next file meanwhile).
   */
  queueSnapshot(feedId: string, body: Uint8Array, options: { observed_ms: number }): Promise<Settled>;
  /**
   * Closes every trip in progress as if unseen past history.trip_timeout_s, writing its stops with
   * what is known: the end of a replayed archive. Resolves once they are stored.
   */
  closeTrips(observedMs: number): Promise<Map<string, StopEventCounts>>;
  /** trips followed for stop events now (metrics) */
  tripsInProgress(): number;
}

/** A poll past its critical path: live, its events published, its history queued. */
export interface Settled {
  poll: FeedPoll;
  /** resolves once the history is stored (or its failure recorded) */
  stored: Promise<FeedPoll>;
}

/** A body the fetch delivered (or a file held), with its hash and the fetcher's commit. */
interface Delivered {
  body: Uint8Array;
  sha256: string;
  commit?: () => void;
}

/** The promise's value if it has settled by the next turn of the event loop, else undefined. */
async function answeredYet<T>(p: Promise<T>): Promise<T | undefined> {
  return Promise.race([p, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
}

export function createPipeline(options: PipelineOptions): Pipeline {
  const { config, history } = options;
  const now = options.now ?? Date.now;
  const log = componentLogger(options.log, 'pipeline');
  const scheduler = options.scheduler ?? asyncScheduler;
  const state = new LiveState({
    config,
    bus: options.bus,
    now,
    initialAlerts: options.initialAlerts,
    scheduleFor: options.scheduleFor,
    servedIds: options.servedIds,
  });
  const feeds = new Map(config.feeds.map((f) => [f.id, f]));
  const fetchers = new Map(config.feeds.map((f) => [f.id, new FeedFetcher(f, options.fetch ?? fetchBody)]));
  const inFlight = new Set<Promise<unknown>>();
  const queue = new HistoryQueue(history, options.history_queue_polls ?? HISTORY_QUEUE_POLLS);
  const quality = new FeedQualityChecker();
  let ticking: Subscription | null = null;
  // one poller per feed, so a reload adds, replaces or removes one without touching the others
  const pollers = new Map<string, Subscription>();
  const startPoller = (feed: FeedConfig): void => {
    pollers.get(feed.id)?.unsubscribe();
    pollers.set(feed.id, pollFeeds([feed], timedPoll, { scheduler, random: options.random }).subscribe());
  };

  const running = new Map<string, Promise<Settled>>();
  const tracker = new StopEventTracker({
    trip_timeout_s: config.history.trip_timeout_s,
    written: options.written_trips,
  });
  /** The feeds of one schedule follow the same trips; a feed without a schedule follows its own. */
  const groupOf = (feed: FeedConfig): { group: string; schedule_id: string | null } => {
    const scheduleId = feedScheduleId(config, feed);
    return scheduleId !== null && options.scheduleFor(feed)
      ? { group: scheduleId, schedule_id: scheduleId }
      : { group: `feed:${feed.id}`, schedule_id: null };
  };

  /**
   * A timed poll ends once its rows are live and its history queued, and the queue has room:
   * a store that falls behind pauses polling (the next timer starts after) and drops nothing.
   */
  const timedPoll = async (feed: FeedConfig): Promise<FeedPoll> => {
    const { poll } = await pollExclusive(feed);
    await queue.room();
    return poll;
  };

  /**
   * One poll per feed at a time, whoever asks: a pollOnce during a timed poll joins it. With
   * `after`, the fetched body waits for that to settle before it is applied.
   */
  const pollExclusive = (feed: FeedConfig, after?: Promise<unknown>): Promise<Settled> => {
    const current = running.get(feed.id);
    if (current) return current;
    const p = runPoll(feed, after);
    running.set(feed.id, p);
    inFlight.add(p);
    p.finally(() => {
      running.delete(feed.id);
      inFlight.delete(p);
    }).catch(() => undefined);
    return p;
  };
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };

  /** Queues a batch that is not a poll's (alert periods, a removed feed's alerts). */
  function write(batch: HistoryBatch, what: string): Promise<void> {
    return track(
      queue.push(batch, async (outcome) => {
        if (outcome instanceof Error) log.error({ err: outcome, what }, 'history write failed');
      }),
    );
  }

  async function runPoll(feed: FeedConfig, after?: Promise<unknown>): Promise<Settled> {
    const started = performance.now();
    const poll = newPoll(feed.id, now());
    let delivered: Delivered | undefined;
    try {
      const fetcher = fetchers.get(feed.id)!;
      const outcome = await fetcher.fetch();
      poll.http_status = outcome.http_status;
      if (outcome.kind === 'failed') {
        quality.gap(feed.id);
        Object.assign(poll, {
          status: outcome.status,
          bytes: outcome.bytes,
          error: outcome.error,
          rejected: { [outcome.reason]: 1 },
        });
      } else if (outcome.kind === 'unchanged') {
        Object.assign(poll, { status: 'unchanged', bytes: outcome.bytes || fetcher.committedBytes });
      } else {
        poll.bytes = outcome.body.byteLength;
        delivered = { body: outcome.body, sha256: outcome.hash, commit: outcome.commit };
      }
    } catch (err) {
      // a bug in one poll is recorded like any failure, and the feed keeps being polled
      Object.assign(poll, { status: 'decode_error', error: `internal: ${(err as Error).message}` });
    }
    if (after) await after.catch(() => undefined);
    return settle(feed, poll, started, delivered, 'poll');
  }

  /**
   * One body through normalize → verdict → live state → history, whether polled or replayed. A
   * snapshot stored before (by this process, an earlier one or a replay) updates the live state
   * but appends no rows; one rejected whole leaves the live state alone. Returns once the rows
   * are live and the batch queued; the history is stored behind (`stored`).
   */
  async function settle(
    feed: FeedConfig,
    poll: FeedPoll,
    started: number,
    delivered: Delivered | undefined,
    source: SnapshotRecord['source'],
  ): Promise<Settled> {
    let rows: NormalizedPoll | undefined;
    let snapshot: SnapshotRecord | undefined;
    // the lookup when it had not answered by the time the body was normalized
    let verdictLater: Promise<boolean> | undefined;
    if (delivered) {
      const key = { feed_id: feed.id, body_sha256: delivered.sha256 };
      // asked while the body is normalized; the writer checks again inside its transaction
      // a batch of the same body still queued stores its rows: this poll is a duplicate of it
      const known = queue.hasPending(key)
        ? Promise.resolve(true)
        : history.hasSnapshot(key).catch((err: unknown) => {
            log.error({ err, feed: feed.id }, 'snapshot lookup failed');
            return false;
          });
      try {
        rows = normalize(feed, delivered, poll, poll.polled_ms);
        if (rows) {
          poll.header_timestamp_ms = rows.header_timestamp_ms;
          poll.entities = rows.entities;
          poll.vehicles = rows.vehicle_entities;
          poll.trip_updates = rows.trip_update_entities;
          poll.alerts = rows.alert_entities;
          poll.rejected = rows.rejected;
          const problem = snapshotProblem(rows, poll.polled_ms, config.freshness);
          if (problem) {
            Object.assign(poll, { status: 'rejected', error: problem });
            rows = undefined;
          } else {
            poll.matching = rows.matching;
            // a lookup held up by the store (a checkpoint) does not hold up the live state: the
            // snapshot counts as new until it answers, before the batch is written
            const answer = await answeredYet(known);
            if (answer === true) poll.status = 'duplicate';
            else {
              snapshot = { ...key, header_timestamp_ms: rows.header_timestamp_ms, observed_ms: poll.polled_ms, source };
              if (answer === undefined) verdictLater = known;
            }
          }
        }
      } catch (err) {
        Object.assign(poll, { status: 'decode_error', error: `internal: ${(err as Error).message}` });
        rows = undefined;
      }
    }
    let stopEvents: StopEvent[] = [];
    if (rows && feed.kind === 'gtfs-rt') {
      try {
        const tracked = tracker.observe({
          feed_id: feed.id,
          ...groupOf(feed),
          schedule: options.scheduleFor(feed),
          // the feed's own clock: its predictions are as of its header, and an old snapshot polled
          // today (allow_old_snapshots) would otherwise pass every stop it predicts
          observed_ms: rows.header_timestamp_ms ?? poll.polled_ms,
          vehicles: rows.vehicles,
          arrivals: rows.arrivals,
        });
        stopEvents = tracked.events;
        poll.stop_events = tracked.counts;
      } catch (err) {
        log.error({ err, feed: feed.id }, 'stop events failed');
      }
    }
    let alertVersions: Alert[] = [];
    try {
      alertVersions = state.applyPoll(poll, rows);
    } catch (err) {
      log.error({ err, feed: feed.id }, 'state update failed');
    }
    const fresh = snapshot !== undefined && rows !== undefined;
    const batch: HistoryBatch = {
      vehicles: fresh ? rows!.vehicles : [],
      arrivals: fresh ? rows!.arrivals : [],
      trips: fresh ? rows!.trips : [],
      alertVersions,
      polls: [poll],
      stopEvents,
      ...(snapshot ? { snapshot } : {}),
    };
    poll.stored =
      batch.vehicles.length +
      batch.arrivals.length +
      batch.trips.length +
      batch.alertVersions.length +
      stopEvents.length;
    // the poll's own time: to the live state and its events (the store's share is the queue's lag)
    poll.duration_ms = performance.now() - started;
    const later = verdictLater;
    const settleVerdict =
      later &&
      (async (): Promise<void> => {
        if (!(await later)) return;
        // stored before after all: a duplicate, whose rows are not appended again
        Object.assign(batch, { vehicles: [], arrivals: [], trips: [] });
        delete batch.snapshot;
        poll.status = 'duplicate';
        poll.stored = batch.alertVersions.length + stopEvents.length;
        state.restatus(poll);
      });
    const stored = track(
      queue
        .push(
          batch,
          async (outcome) => {
            if (!(outcome instanceof Error)) {
              // a decode failure or a rejected snapshot is not remembered, so it keeps being reported
              if (rows) delivered?.commit?.();
            } else {
              log.error({ err: outcome, what: feed.id }, 'history write failed');
              // the rows are lost for this poll; the poll itself is still worth recording
              poll.stored = 0;
              poll.error = poll.error ?? 'history write failed';
              await history
                .write({ vehicles: [], arrivals: [], trips: [], alertVersions: [], polls: [poll] })
                .catch((err: unknown) => log.error({ err, what: `${feed.id} poll row` }, 'history write failed'));
            }
            logPoll(poll);
            options.onPoll?.(poll);
          },
          settleVerdict,
        )
        .then(() => poll),
    );
    return { poll, stored };
  }

  function normalize(
    feed: FeedConfig,
    { body, sha256: hash }: Delivered,
    poll: FeedPoll,
    polledMs: number,
  ): NormalizedPoll | undefined {
    const schedule = options.scheduleFor(feed);
    const input = {
      feed_id: feed.id,
      // rows carry it into history: a stored id is the id of that schedule (core/served-ids.ts)
      schedule_id: groupOf(feed).schedule_id,
      observed_ms: polledMs,
      schedule,
      timezone: schedule?.timezone ?? feed.timezone ?? 'UTC',
      default_mode: feed.mode ?? null,
      freshness: config.freshness,
      delay: config.delay,
      rejects: new RejectTally(),
      matcher: new TripMatcher(feed.trip_matching, feed.route_aliases),
      allow_old_snapshots: feed.allow_old_snapshots,
    };
    if (feed.kind === 'alerts-json') {
      const result = normalizeAlertsJson(body, input);
      if (result.ok) return result.poll;
      Object.assign(poll, { status: 'decode_error', error: result.error, rejected: { invalid_alerts_json: 1 } });
      return undefined;
    }
    const decoded = decodeFeedMessage(body);
    if (!decoded.ok) {
      quality.gap(feed.id);
      Object.assign(poll, { status: 'decode_error', error: decoded.error, rejected: { [decoded.reason]: 1 } });
      poll.findings = NOT_A_FEED;
      return undefined;
    }
    // the rules read the decoded message as it is; they never change what is stored, nor fail a poll
    try {
      poll.findings = quality.check(feed.id, decoded.message, {
        sha256: hash,
        now_ms: polledMs,
        schedule,
        interval_s: feed.interval_s,
      });
    } catch (err) {
      log.error({ err, feed: feed.id }, 'feed rule check failed');
    }
    return normalizeFeedMessage(decoded.message, input);
  }

  function logPoll(poll: FeedPoll): void {
    const rejected = Object.keys(poll.rejected).length > 0;
    if (!rejected && !poll.error) return;
    log.warn(
      {
        feed: poll.feed_id,
        status: poll.status,
        entities: poll.entities,
        stored: poll.stored,
        ...(rejected ? { rejected: poll.rejected } : {}),
        ...(poll.error ? { error: poll.error.slice(0, 200) } : {}),
      },
      poll.error ? 'poll failed' : 'poll rejected entities',
    );
  }

  async function tick(): Promise<void> {
    const versions = state.tick(now());
    if (versions.length)
      await write({ vehicles: [], arrivals: [], trips: [], alertVersions: versions, polls: [] }, 'alert periods');
  }

  function snapshotLive(feedId: string, body: Uint8Array, observedMs: number): Promise<Settled> {
    const feed = feedById(feedId);
    const started = performance.now();
    const poll = newPoll(feed.id, observedMs);
    poll.bytes = body.byteLength;
    return track(settle(feed, poll, started, { body, sha256: sha256(body) }, 'replay'));
  }

  function feedById(feedId: string): FeedConfig {
    const feed = feeds.get(feedId);
    if (!feed) throw new Error(`unknown feed ${JSON.stringify(feedId)}`);
    return feed;
  }

  return {
    state,
    start(): void {
      if (ticking) return;
      for (const feed of feeds.values()) startPoller(feed);
      ticking = interval(options.tick_ms ?? 5_000, scheduler).subscribe(() => void track(tick()));
    },
    async stop(): Promise<void> {
      for (const s of pollers.values()) s.unsubscribe();
      pollers.clear();
      ticking?.unsubscribe();
      ticking = null;
      // polls in flight finish, then everything queued is stored before the database may close
      await Promise.allSettled([...inFlight]);
      await queue.idle();
    },
    pollOnce: async (feedId) => (await pollExclusive(feedById(feedId))).stored,
    pollAllOnce: () => {
      // fetched at once, applied in the order configured: feeds of one schedule share a trip
      // tracker, and the order their snapshots reach it decides the stop events it writes
      let previous: Promise<unknown> | undefined;
      return Promise.all(
        [...feeds.values()].map(async (feed) => {
          const settled = pollExclusive(feed, previous);
          previous = settled;
          return (await settled).stored;
        }),
      );
    },
    historyQueue: () => queue.figures(),
    feeds: () => [...feeds.values()],
    upsertFeed(feed: FeedConfig): void {
      feeds.set(feed.id, feed);
      quality.forget(feed.id);
      // a new fetcher: a changed URL or headers must not answer "unchanged" from the old body
      fetchers.set(feed.id, new FeedFetcher(feed, options.fetch ?? fetchBody));
      state.upsertFeed(feed);
      if (ticking) startPoller(feed);
    },
    async removeFeed(feedId: string): Promise<void> {
      if (!feeds.delete(feedId)) return;
      pollers.get(feedId)?.unsubscribe();
      pollers.delete(feedId);
      await running.get(feedId)?.catch(() => undefined);
      fetchers.delete(feedId);
      quality.forget(feedId);
      const versions = state.removeFeed(feedId, now());
      if (versions.length)
        await write({ vehicles: [], arrivals: [], trips: [], alertVersions: versions, polls: [] }, `${feedId} removed`);
    },
    ingestSnapshot: async (feedId, body, options) => (await snapshotLive(feedId, body, options.observed_ms)).stored,
    queueSnapshot: async (feedId, body, options) => {
      const settled = await snapshotLive(feedId, body, options.observed_ms);
      await queue.room();
      return settled;
    },
    async closeTrips(observedMs) {
      const scheduleOfGroup = (group: string): ScheduleIndex | undefined => {
        const feed = [...feeds.values()].find((f) => groupOf(f).group === group);
        return feed && options.scheduleFor(feed);
      };
      const { events, byFeed } = tracker.closeAll(observedMs, scheduleOfGroup);
      if (events.length)
        await write(
          { vehicles: [], arrivals: [], trips: [], alertVersions: [], polls: [], stopEvents: events },
          'stop events',
        );
      return byFeed;
    },
    tripsInProgress: () => tracker.tripsInProgress,
  };
}
