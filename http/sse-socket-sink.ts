// Where an SSE frame is written to a socket: one open event stream over the socket layer's
// response, with the bookkeeping uWebSockets.js needs (corked writes, an upper bound of what it
// holds, drain writes, the shared send budget). Kept apart from http/server.ts, the one file that
// imports uWebSockets.js, so it is read and tested without it: server.ts passes the uWS
// response, which has every method of SseSocket. Wiring and pitfalls: http/sse-socket-sink-notes.md.
import type { BudgetEntry, CutReason, SendBudget } from '../stream/send-budget.ts';
import type { StreamSink, StreamWriteResult } from './types.ts';

/** What the sink calls on the response: the part of uWS's HttpResponse an event stream uses. */
export interface SseSocket {
  /** false when uWS could not hand it all to the kernel (it keeps the rest) */
  write(chunk: Buffer): boolean;
  /** runs `fn` with the socket corked: every write outside uWS's own handlers must be */
  cork(fn: () => void): unknown;
  /** called by uWS when the socket drained; returns whether the handler's own write went through */
  onWritable(handler: (offset: number) => boolean): unknown;
  /** drops the connection and what uWS holds for it */
  close(): unknown;
  /** ends the response after what is queued */
  end(): unknown;
}

/** A comment line: with an onWritable handler registered, uWS drains only when it writes. */
const DRAIN = Buffer.from(':\n\n');

/**
 * One event stream over a uWS response (numbers: pitfalls in shared/design/sse-fanout-notes.md).
 * uWS cannot report its buffer (3: getWriteOffset only moves for tryEnd) and a corked write
 * reports success even when the flush after it fails (2), so the sink keeps an upper bound of
 * what uWS holds: after a successful write at most that chunk, after a failed one everything
 * since the last success; a drain write that succeeds empties it. The producer (the stream hub)
 * decides when a client is too far behind; `hardLimitBytes` is the socket layer's own backstop.
 */
export class SseSocketSink implements StreamSink {
  private queued = 0;
  private gone = false;
  private chunk: Buffer | null = null;
  private lastWriteOk = true;
  private listeners: Array<() => void> = [];
  /** one function per sink, so no closure is allocated per write on the fan-out path */
  private readonly corkedWrite = (): void => {
    this.lastWriteOk = this.res.write(this.chunk!);
  };

  /** this stream's account in the shared send budget */
  private readonly budget: BudgetEntry | null;
  /** why the budget cut this stream, if it did */
  cutReason: CutReason | null = null;

  constructor(
    private readonly res: SseSocket,
    private readonly hardLimitBytes: number,
    private readonly onEnd: (sink: SseSocketSink) => void,
    budget?: SendBudget,
  ) {
    this.budget = budget
      ? budget.register((reason) => {
          this.cutReason = reason;
          this.close('abort');
        })
      : null;
    // registered at once: without it a drained socket keeps a 10 s timeout that kills it (5)
    res.onWritable(() => {
      if (this.gone) return true;
      const ok = res.write(DRAIN);
      if (ok) this.queued = 0;
      // writable again: the kernel took some of the backlog, which restarts the stall clock
      this.budget?.report(ok ? 0 : this.queued, true);
      return ok;
    });
  }

  get closed(): boolean {
    return this.gone;
  }

  /** From res.onAborted: the response must not be touched any more. */
  aborted(): void {
    if (this.gone) return;
    this.gone = true;
    this.ended();
  }

  write(chunk: Buffer): StreamWriteResult {
    if (this.gone) return 'closed';
    this.chunk = chunk;
    // every write outside a request handler must be corked (1)
    this.res.cork(this.corkedWrite);
    this.chunk = null;
    if (this.gone) return 'closed';
    if (this.lastWriteOk) {
      this.queued = chunk.length;
      // a write that went through found uWS's backlog flushed: nothing held, progress made
      if (this.budget !== null && this.budget.bytes !== 0) this.budget.report(0, true);
      return 'ok';
    }
    this.queued += chunk.length;
    if (this.queued - chunk.length > this.hardLimitBytes) {
      this.close('abort');
      return 'closed';
    }
    // may cut this stream (or others stalled longer) when the budget is exceeded
    this.budget?.report(this.queued, false);
    if (this.gone) return 'closed';
    return 'backpressure';
  }

  bufferedBytes(): number {
    return this.queued;
  }

  close(mode: 'end' | 'abort'): void {
    if (this.gone) return;
    this.gone = true;
    if (mode === 'abort') {
      // drops uWS's queue at once; onAborted runs (synchronously) and finds the sink gone
      this.res.close();
    } else {
      // the terminating chunk goes after what is queued; uWS drops onWritable and drains itself
      this.res.cork(() => this.res.end());
    }
    this.ended();
  }

  onClose(listener: () => void): void {
    if (this.gone) listener();
    // a literal of one: push() on an empty array reserves room for 17, per connection
    else if (this.listeners.length === 0) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  private ended(): void {
    this.budget?.release();
    this.onEnd(this);
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // a failing listener must not keep the others from running
      }
    }
  }
}
