// The one way a buffer reaches the store in batches (usage meter, event log): flushes run one
// after another, so rows are appended in the order they were buffered; a timer flushes on its
// own (on an interval, or once shortly after the first buffered row); stop() ends the timer so
// a close can flush a last time. What a flush writes, and what it keeps when the store fails,
// stays with its owner.
export class BatchedFlush {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly flushOnce: () => Promise<void>) {}

  /** One flush, after every flush (and queued work) before it. */
  flush(): Promise<void> {
    return this.queue(this.flushOnce);
  }

  /** Other work (a final prune, say) in the same order as the flushes. */
  queue(work: () => Promise<void>): Promise<void> {
    const run = this.chain.then(work);
    // a failed flush is its caller's to see; it never stops the flushes queued after it
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Flushes every `ms` until stop(); never keeps the process alive. */
  every(ms: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush().catch(() => undefined), ms);
    this.timer.unref();
  }

  /** Flushes once `ms` from now, unless a flush is already due. */
  soon(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().catch(() => undefined);
    }, ms);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer); // clears a setTimeout timer too
      this.timer = null;
    }
  }
}
