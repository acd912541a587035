// One open event stream as the hub sees it: the sink, its deadline, and the bounded-buffer rule.
import type { Logger } from '../core/logger.ts';
import type { SinkWriteResult, SseSink } from './sse-sink.ts';

export type CloseReason =
  /** the server reported the connection gone (client left, network error) */
  | 'client'
  /** the client did not read fast enough; its buffer passed sse.buffer_bytes */
  | 'slow'
  /** the documented maximum connection lifetime (sse.max_connection_s) was reached */
  | 'lifetime'
  /** a resume replay was larger than one buffer; the client continues on reconnect */
  | 'replay_partial'
  /** the stream's first result could not be computed; the client retries */
  | 'error'
  /** the API key that opened it was revoked (stream/key-streams.ts) */
  | 'revoked'
  | 'shutdown';

/** What the server holds for each stream it opened through the hub. */
export interface Subscription {
  readonly id: number;
  readonly closed: boolean;
  /** The server calls this when the connection ended on its side (onAborted); default 'client'. */
  close(reason?: CloseReason): void;
  /** Runs once when the stream ends for any reason (release allowance, stop metering). */
  onClose(listener: (reason: CloseReason) => void): void;
  /** Ends the stream for a reason of the server's after `last` (whole SSE blocks), whatever is buffered. */
  closeWith(reason: CloseReason, last: Buffer): void;
}

export class Subscriber implements Subscription {
  private isClosed = false;
  private listeners: Array<(reason: CloseReason) => void> = [];
  /** set by the owner (topic or fan-out group) that must forget this subscriber on close */
  detach: ((subscriber: Subscriber) => void) | null = null;

  constructor(
    readonly id: number,
    private readonly sink: SseSink,
    /** bytes a client may fall behind before it is cut (sse.buffer_bytes) */
    private readonly limitBytes: number,
    readonly openedAtMs: number,
    readonly deadlineMs: number,
    private readonly onEnded: (subscriber: Subscriber, reason: CloseReason) => void,
    private readonly log?: Logger,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Writes one chunk; false when the subscriber is (now) closed. A chunk larger than the bound
   * (a big reset) is allowed through: the rule is about falling behind, so the subscriber is cut
   * when what was already queued before this chunk exceeds the bound.
   */
  write(chunk: Buffer): boolean {
    if (this.isClosed) return false;
    let result: SinkWriteResult;
    try {
      result = this.sink.write(chunk);
    } catch (err) {
      this.log?.error({ err }, 'sse sink write threw; stream closed');
      this.end('error', 'abort');
      return false;
    }
    if (result === 'ok') return true;
    if (result === 'closed') {
      this.end('client', null);
      return false;
    }
    if (this.sink.bufferedBytes() - chunk.length > this.limitBytes) {
      this.end('slow', 'abort');
      return false;
    }
    return true;
  }

  close(reason: CloseReason = 'client'): void {
    // the server reports a gone client; for our own reasons we also end the response
    this.end(reason, reason === 'client' ? null : reason === 'slow' ? 'abort' : 'end');
  }

  closeWith(reason: CloseReason, last: Buffer): void {
    if (this.isClosed) return;
    let result: SinkWriteResult;
    try {
      // past the slow-client bound too: the last words must reach a client that is still reading
      result = this.sink.write(last);
    } catch (err) {
      this.log?.error({ err }, 'sse sink write threw; stream closed');
      this.end('error', 'abort');
      return;
    }
    if (result === 'closed') this.end('client', null);
    else this.end(reason, 'end');
  }

  onClose(listener: (reason: CloseReason) => void): void {
    if (this.isClosed) return;
    // a literal of one: push() on an empty array reserves room for 17, per connection
    if (this.listeners.length === 0) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  private end(reason: CloseReason, mode: 'end' | 'abort' | null): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.detach?.(this);
    this.detach = null;
    this.onEnded(this, reason);
    if (mode) {
      try {
        this.sink.close(mode);
      } catch (err) {
        this.log?.error({ err }, 'sse sink close threw');
      }
    }
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      try {
        listener(reason);
      } catch (err) {
        this.log?.error({ err }, 'stream close listener threw');
      }
    }
  }
}
