// One memory budget for the unsent bytes of every event stream in the process (keyed streams
// through the hub and the public /status/stream), and the stall rule. The socket layer registers
// each stream and reports what it holds that the kernel did not take; this module decides whom
// to cut. A client that stops reading holds its whole backlog in user space until it is cut:
// 1,800 of them held 2.5 GB before, whatever each one's own bound (sse.buffer_bytes).
//
// "Stalled" means holding unsent bytes with no progress since: the stall clock starts at the
// first write that could not be flushed and restarts whenever the socket drains some of its
// backlog. Stalled connections are kept in one Set in stall order (a connection that makes
// progress is moved to the end), so "longest-stalled first" and the timeout sweep are walks
// from the front that stop at the first connection they spare.
import type { Logger } from '../core/logger.ts';

export type CutReason =
  /** the budget was exceeded; the longest-stalled streams went first */
  | 'budget'
  /** no progress for sse.stall_timeout_s */
  | 'stalled';

export interface SendBudgetOptions {
  /** unsent bytes all streams together may hold (sse.send_budget_bytes) */
  readonly budgetBytes: number;
  /** a stream stalled this long is cut (sse.stall_timeout_s) */
  readonly stallTimeoutMs: number;
  /** how often the stall rule is checked (default a quarter of the timeout, at most 1 s) */
  readonly sweepIntervalMs?: number;
  readonly now?: () => number;
  readonly log?: Logger;
}

export interface SendBudgetStats {
  /** unsent bytes reported by all streams */
  bufferedBytes: number;
  /** streams holding unsent bytes */
  stalled: number;
  /** streams registered */
  streams: number;
  cutForBudget: number;
  cutForStall: number;
}

/** One stream's account, held by the socket layer. */
export class BudgetEntry {
  /** unsent bytes last reported */
  bytes = 0;
  /** when the current stall started (meaningful while bytes > 0) */
  stalledSinceMs = 0;
  released = false;

  constructor(
    private readonly budget: SendBudget,
    /** ends the connection now (abort: its backlog is dropped) */
    readonly cut: (reason: CutReason) => void,
  ) {}

  /**
   * The stream holds `bytes` the kernel has not taken (0: nothing). `progressed`: some of its
   * backlog went out since the last report (a drain, a write that flushed).
   */
  report(bytes: number, progressed: boolean): void {
    this.budget.update(this, bytes, progressed);
  }

  /** The connection ended: its bytes leave the budget. */
  release(): void {
    this.budget.release(this);
  }
}

export class SendBudget {
  private readonly stalled = new Set<BudgetEntry>();
  private total = 0;
  private streams = 0;
  private enforcing = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;
  cutForBudget = 0;
  cutForStall = 0;

  constructor(private readonly options: SendBudgetOptions) {
    if (!(options.budgetBytes > 0)) throw new RangeError('budgetBytes must be positive');
    if (!(options.stallTimeoutMs > 0)) throw new RangeError('stallTimeoutMs must be positive');
    this.now = options.now ?? Date.now;
  }

  /** Starts the stall sweep (idempotent). */
  start(): this {
    if (!this.timer) {
      const every = this.options.sweepIntervalMs ?? Math.min(1_000, Math.max(10, this.options.stallTimeoutMs / 4));
      this.timer = setInterval(() => this.sweep(), every).unref();
    }
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  register(cut: (reason: CutReason) => void): BudgetEntry {
    this.streams++;
    return new BudgetEntry(this, cut);
  }

  get bufferedBytes(): number {
    return this.total;
  }

  stats(): SendBudgetStats {
    return {
      bufferedBytes: this.total,
      stalled: this.stalled.size,
      streams: this.streams,
      cutForBudget: this.cutForBudget,
      cutForStall: this.cutForStall,
    };
  }

  /** Cuts every stream stalled for at least the timeout, longest first. */
  sweep(nowMs = this.now()): void {
    const cutoff = nowMs - this.options.stallTimeoutMs;
    for (const entry of this.stalled) {
      // stall order: the first one spared is the oldest left
      if (entry.stalledSinceMs > cutoff) break;
      this.cut(entry, 'stalled');
    }
  }

  /** @internal BudgetEntry.report */
  update(entry: BudgetEntry, bytes: number, progressed: boolean): void {
    if (entry.released) return;
    this.total += bytes - entry.bytes;
    entry.bytes = bytes;
    if (bytes === 0) {
      this.stalled.delete(entry);
      return;
    }
    if (progressed || !this.stalled.has(entry)) {
      // (re)starts the stall clock and moves the stream behind every longer-stalled one
      this.stalled.delete(entry);
      entry.stalledSinceMs = this.now();
      this.stalled.add(entry);
    }
    if (this.total > this.options.budgetBytes) this.enforce();
  }

  /** @internal BudgetEntry.release */
  release(entry: BudgetEntry): void {
    if (entry.released) return;
    entry.released = true;
    this.total -= entry.bytes;
    entry.bytes = 0;
    this.stalled.delete(entry);
    this.streams--;
  }

  private enforce(): void {
    // cutting closes sockets, whose close handlers may report again: one pass at a time
    if (this.enforcing) return;
    this.enforcing = true;
    try {
      for (const entry of this.stalled) {
        if (this.total <= this.options.budgetBytes) break;
        this.cut(entry, 'budget');
      }
    } finally {
      this.enforcing = false;
    }
  }

  private cut(entry: BudgetEntry, reason: CutReason): void {
    const bytes = entry.bytes;
    const stalledMs = this.now() - entry.stalledSinceMs;
    this.release(entry);
    if (reason === 'budget') this.cutForBudget++;
    else this.cutForStall++;
    this.options.log?.info({ reason, bytes, stalled_s: Math.round(stalledMs / 1000) }, 'event stream cut');
    try {
      entry.cut(reason);
    } catch {
      // the connection is already released from the budget; a failing close must not stop the pass
    }
  }
}

export function sendBudgetFromConfig(
  sse: { send_budget_bytes: number; stall_timeout_s: number },
  extra: Partial<SendBudgetOptions> = {},
): SendBudget {
  return new SendBudget({ budgetBytes: sse.send_budget_bytes, stallTimeoutMs: sse.stall_timeout_s * 1000, ...extra });
}
