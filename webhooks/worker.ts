// Delivers the outbox: claims due deliveries within the concurrency bounds (overall and per
// endpoint), signs and sends each attempt, and hands the verdict to the recorder. Time comes
// from an injected clock, so the hours-long retry schedule can be driven by tests.
import type { Db } from '../store/db.ts';
import { ApiError } from '../core/errors.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { BodyCache } from './body-cache.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { claimDue, nextDueMs, recoverInFlight, type AttemptVerdict, type ClaimedDelivery } from './delivery-store.ts';
import { signingSecrets } from './endpoints.ts';
import { VerdictRecorder } from './recorder.ts';
import type { SecretBox } from './secret-box.ts';
import { nextStep, type AttemptResult } from './retry-policy.ts';
import { createAgents, sendAttempt, type Agents } from './sender.ts';
import { signHeaders } from './signing.ts';
import { checkTarget, systemResolver, type Resolver, type TargetPolicy } from './ssrf.ts';

export interface WorkerOptions {
  db: Db;
  clock: Clock;
  policy: TargetPolicy;
  resolve?: Resolver;
  timeoutMs: number;
  maxConcurrency: number;
  maxConcurrencyPerEndpoint: number;
  /** jitter source, [0, 1) */
  random?: () => number;
  /** longest sleep between looks at the outbox, a safety net behind `wake()` */
  maxIdleMs?: number;
  /** how long `stop()` lets running attempts finish before interrupting them (real ms) */
  stopGraceMs?: number;
  /** default: logged on `log` */
  onError?: (err: unknown) => void;
  log?: Logger;
  onVerdict?: (verdict: AttemptVerdict) => void;
  onEndpointsDisabled?: (endpointIds: string[]) => void;
  /** bodies of messages the outbox just stored */
  bodies?: BodyCache;
  /** opens the stored endpoint secrets, right before they sign */
  secrets: SecretBox;
}

export interface WorkerStats {
  attempts: number;
  succeeded: number;
  failed_attempts: number;
  interrupted: number;
  recovered_at_start: number;
}

interface Running {
  promise: Promise<void>;
  interrupt: () => void;
}

export class DeliveryWorker {
  private readonly agents: Agents = createAgents();
  private readonly recorder: VerdictRecorder;
  private readonly inflight = new Map<string, Running>();
  /** attempts per endpoint running or awaiting their verdict's commit, for the per-endpoint bound */
  private readonly busy = new Map<string, number>();
  private readonly resolve: Resolver;
  private readonly random: () => number;
  private running = false;
  private pumping: Promise<void> | null = null;
  private again = false;
  private timer: TimerHandle | null = null;
  readonly stats: WorkerStats = {
    attempts: 0,
    succeeded: 0,
    failed_attempts: 0,
    interrupted: 0,
    recovered_at_start: 0,
  };

  constructor(private readonly options: WorkerOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.random = options.random ?? Math.random;
    this.recorder = new VerdictRecorder(
      options.db,
      () => options.clock.now(),
      (err) => this.report(err),
      options.onEndpointsDisabled,
    );
  }

  /** Recovers deliveries a crash left in flight, then starts delivering. */
  async start(): Promise<void> {
    if (this.running) return;
    this.stats.recovered_at_start = await recoverInFlight(this.options.db, Math.round(this.options.clock.now()));
    this.running = true;
    void this.pump();
  }

  /** New work may be due: look now rather than at the next timer. */
  wake(): void {
    void this.pump();
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /**
   * Runs until nothing is in flight and nothing is due at the clock's current time. Tests use
   * it after moving a manual clock; nothing else needs it.
   */
  async drain(): Promise<void> {
    for (let guard = 0; guard < 10_000; guard++) {
      await this.pump();
      if (this.inflight.size > 0) {
        await Promise.race([...this.inflight.values()].map((r) => r.promise));
        continue;
      }
      await this.recorder.idle();
      const due = await nextDueMs(this.options.db);
      if (!this.running || due === null || due > this.options.clock.now()) return;
    }
    throw new Error('webhook worker: drain did not settle');
  }

  /** Stops claiming, lets running attempts finish for the grace period, interrupts the rest. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.clearTimer();
    this.recorder.abandonOnFailure();
    await this.pumping;
    const all = Promise.allSettled([...this.inflight.values()].map((r) => r.promise));
    const grace = setTimeout(() => {
      for (const r of this.inflight.values()) r.interrupt();
    }, this.options.stopGraceMs ?? 5_000);
    await all;
    clearTimeout(grace);
    await this.recorder.idle();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private report(err: unknown): void {
    if (this.options.onError) this.options.onError(err);
    else componentLogger(this.options.log, 'webhooks').error({ err }, 'delivery worker failed');
  }

  private pump(): Promise<void> {
    if (!this.running) return Promise.resolve();
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    const run = (async () => {
      do {
        this.again = false;
        try {
          await this.pumpOnce();
        } catch (err) {
          this.report(err);
          this.arm(1_000);
        }
      } while (this.again && this.running);
    })();
    this.pumping = run.finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private async pumpOnce(): Promise<void> {
    const { db, clock, maxConcurrency, maxConcurrencyPerEndpoint } = this.options;
    const free = maxConcurrency - this.inflight.size;
    if (free <= 0) return this.clearTimer(); // a finishing attempt pumps again
    const { claimed, more } = await claimDue(
      db,
      Math.round(clock.now()),
      free,
      maxConcurrencyPerEndpoint,
      this.busy,
      this.options.bodies,
    );
    for (const delivery of claimed) this.launch(delivery);
    if (more) this.again = true; // a busy endpoint's backlog hid others' due rows
    // a full claim may have left more due; the attempts just launched will pump when done
    if (!this.running || more || claimed.length === free) return this.clearTimer();
    const due = await nextDueMs(db);
    const now = clock.now();
    const idle = this.options.maxIdleMs ?? 60_000;
    if (due === null) this.arm(idle);
    else if (due > now) this.arm(Math.min(due - now, idle));
    // due but unclaimed: its endpoint's slots are busy, or its row awaits a verdict commit;
    // a finishing attempt or the commit pumps again, the timer is only a safety net
    else this.arm(1_000);
  }

  private arm(ms: number): void {
    this.clearTimer();
    if (!this.running) return;
    this.timer = this.options.clock.setTimeout(
      () => {
        this.timer = null;
        void this.pump();
      },
      Math.max(0, ms),
    );
  }

  private clearTimer(): void {
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private launch(delivery: ClaimedDelivery): void {
    const handle: Running = { promise: Promise.resolve(), interrupt: () => undefined };
    let interrupted = false;
    handle.interrupt = () => {
      interrupted = true;
    };
    handle.promise = (async () => {
      let result: AttemptResult;
      try {
        result = await this.attempt(delivery, handle, () => interrupted);
      } catch (err) {
        result = {
          outcome: 'network_error',
          status_code: null,
          latency_ms: null,
          error: (err as Error).message,
          retry_after_ms: null,
        };
      }
      const finished = Math.round(this.options.clock.now());
      const judged = delivery.judged_before + (result.outcome === 'interrupted' ? 0 : 1);
      const verdict: AttemptVerdict = {
        delivery_id: delivery.delivery_id,
        endpoint_id: delivery.endpoint_id,
        attempt: delivery.attempt,
        started_ms: delivery.started_ms,
        finished_ms: finished,
        result,
        step: nextStep(result, judged, finished, this.random),
      };
      this.count(result);
      // The overall slot frees as soon as the request is over; the endpoint's slot only once
      // the verdict commits, so after a 410 nothing more is claimed for that endpoint.
      void this.recorder.add(verdict).then(() => {
        this.release(delivery.endpoint_id);
        this.options.onVerdict?.(verdict);
        void this.pump();
      });
    })().finally(() => {
      this.inflight.delete(delivery.delivery_id);
      void this.pump();
    });
    this.inflight.set(delivery.delivery_id, handle);
    this.busy.set(delivery.endpoint_id, (this.busy.get(delivery.endpoint_id) ?? 0) + 1);
  }

  private release(endpointId: string): void {
    const n = (this.busy.get(endpointId) ?? 1) - 1;
    if (n > 0) this.busy.set(endpointId, n);
    else this.busy.delete(endpointId);
  }

  private count(result: AttemptResult): void {
    this.stats.attempts++;
    if (result.outcome === 'succeeded') this.stats.succeeded++;
    else if (result.outcome === 'interrupted') this.stats.interrupted++;
    else this.stats.failed_attempts++;
  }

  private async attempt(
    delivery: ClaimedDelivery,
    handle: Running,
    isInterrupted: () => boolean,
  ): Promise<AttemptResult> {
    const { clock, policy } = this.options;
    const refused = (outcome: AttemptResult['outcome'], error: string): AttemptResult => ({
      outcome,
      status_code: null,
      latency_ms: null,
      error,
      retry_after_ms: null,
    });
    let target: Awaited<ReturnType<typeof checkTarget>>;
    try {
      // checked again at every attempt: the name may resolve elsewhere since registration
      target = await checkTarget(delivery.url, policy, this.resolve);
    } catch (err) {
      if (err instanceof ApiError) return refused('unsafe_target', err.detail);
      return refused('network_error', (err as Error).message);
    }
    if (isInterrupted())
      return refused('interrupted', 'attempt interrupted by shutdown before sending; it will be retried');
    const now = clock.now();
    const headers = signHeaders(
      signingSecrets(delivery, now).map((stored) => this.options.secrets.open(stored, delivery.endpoint_id)),
      delivery.message_id,
      Math.floor(now / 1000),
      delivery.body,
    );
    const sent = sendAttempt({
      target,
      headers: { ...headers },
      body: delivery.body,
      timeoutMs: this.options.timeoutMs,
      clock,
      agents: this.agents,
    });
    handle.interrupt = sent.interrupt;
    const result = await sent.result;
    if (result.outcome === 'redirect' && result.location) {
      result.error = `${result.error}${await this.describeRedirect(delivery.url, result.location)}`;
    }
    return result;
  }

  /** Says whether the redirect target would itself be refused, so the audit explains the risk. */
  private async describeRedirect(from: string, location: string): Promise<string> {
    let resolved: string;
    try {
      resolved = new URL(location, from).href;
    } catch {
      return '; the Location is not a valid URL';
    }
    try {
      await checkTarget(resolved, this.options.policy, this.resolve);
      return '';
    } catch (err) {
      return err instanceof ApiError ? `; the redirect target is refused too: ${err.detail}` : '';
    }
  }
}
