// One poller for every feed: per feed a timer whose delay is recomputed each cycle (interval on
// success, jittered exponential backoff on failure) feeding an exhaustMap, so polls of one feed
// never overlap. Errors are caught inside each poll: the stream outlives any one failure.
import {
  asyncScheduler,
  catchError,
  defer,
  exhaustMap,
  from,
  merge,
  of,
  repeat,
  tap,
  timer,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
import type { FeedConfig } from '../core/config.ts';
import { isSuccessfulPoll, newPoll, type FeedPoll } from '../core/types.ts';

export interface PollerOptions {
  scheduler?: SchedulerLike;
  /** in [0, 1); injectable so tests see deterministic jitter */
  random?: () => number;
  /** turns an unexpected throw from `poll` into the poll record that the stream emits */
  onError?: (feed: FeedConfig, err: unknown) => FeedPoll;
}

export const isFailure = (poll: FeedPoll): boolean => !isSuccessfulPoll(poll.status);

/**
 * Delay before the next poll. After a success the feed keeps its cadence from the last start;
 * after n consecutive failures it waits interval·2^(n-1), capped at backoff_max_s, scaled by a
 * jitter in [0.5, 1) so that feeds failing together do not retry together.
 */
export function nextDelayMs(
  feed: Pick<FeedConfig, 'interval_s' | 'backoff_max_s'>,
  failures: number,
  sinceLastStartMs: number,
  random: () => number,
): number {
  const interval = feed.interval_s * 1000;
  if (failures === 0) return Math.max(0, interval - sinceLastStartMs);
  const ceiling = Math.max(interval, feed.backoff_max_s * 1000);
  const backoff = Math.min(ceiling, interval * 2 ** Math.min(failures - 1, 30));
  return Math.round(backoff * (0.5 + random() / 2));
}

export function pollFeeds(
  feeds: readonly FeedConfig[],
  poll: (feed: FeedConfig) => Promise<FeedPoll>,
  options: PollerOptions = {},
): Observable<FeedPoll> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  const onError = options.onError ?? defaultErrorPoll(scheduler);
  return merge(
    ...feeds.map((feed) => {
      let failures = 0;
      let lastStart: number | null = null;
      const once$ = defer(() => {
        lastStart = scheduler.now();
        return from(poll(feed));
      }).pipe(
        catchError((err: unknown) => of(onError(feed, err))),
        tap((result) => {
          failures = isFailure(result) ? failures + 1 : 0;
        }),
      );
      return defer(() =>
        timer(lastStart === null ? 0 : nextDelayMs(feed, failures, scheduler.now() - lastStart, random), scheduler),
      ).pipe(
        exhaustMap(() => once$),
        repeat(),
      );
    }),
  );
}

function defaultErrorPoll(scheduler: SchedulerLike) {
  return (feed: FeedConfig, err: unknown): FeedPoll => ({
    ...newPoll(feed.id, scheduler.now(), 'network_error'),
    error: `poll failed: ${(err as Error)?.message ?? String(err)}`,
  });
}
