// A topic every subscriber reads the same thing from (the status page): the current state on
// connect, then each new state as one event. Unlike a query topic there is nothing to diff or
// resume: a reconnecting client gets the current state again. The event is framed once by
// sse-frame (CR/LF in a value can only ever become more `data:` lines) and the same Buffer is
// written to every subscriber; the hub's rules (bounded buffer, lifetime, pings, shutdown) apply
// to these subscribers as to any other.
import { frame, frameBytes } from './sse-frame.ts';
import type { CloseReason, Subscriber } from './subscriber.ts';

export class BroadcastTopic {
  private readonly subscribers = new Set<Subscriber>();
  private nextId = 1;
  /** events framed (once each, whatever the number of subscribers) */
  framesEncoded = 0;

  constructor(
    readonly name: string,
    /** the `event:` name of every frame */
    private readonly event: string,
    private readonly retryFrame: Buffer,
  ) {
    // refused now (CR or LF) rather than at the first update
    frame({ event });
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Adds a subscriber and sends it `current` at once, after the stream's `retry:`. */
  attach(subscriber: Subscriber, current: string): void {
    if (subscriber.closed) return;
    this.subscribers.add(subscriber);
    subscriber.detach = (s) => this.subscribers.delete(s);
    subscriber.write(Buffer.concat([this.retryFrame, this.frame(current)]));
  }

  /**
   * One event to every subscriber. `data` is rendered only when someone listens, so a topic
   * nobody reads costs nothing.
   */
  publish(data: string | (() => string)): void {
    if (this.subscribers.size === 0) return;
    const chunk = this.frame(typeof data === 'string' ? data : data());
    for (const subscriber of [...this.subscribers]) subscriber.write(chunk);
  }

  /** Writes `chunk` (a ping) to every subscriber. */
  writeAll(chunk: Buffer): void {
    for (const subscriber of [...this.subscribers]) subscriber.write(chunk);
  }

  closeAll(reason: CloseReason): void {
    for (const subscriber of [...this.subscribers]) subscriber.close(reason);
  }

  private frame(data: string): Buffer {
    this.framesEncoded++;
    return frameBytes({ id: this.nextId++, event: this.event, data });
  }
}
