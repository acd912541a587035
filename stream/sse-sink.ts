// The seam between the streaming core and a socket layer: what the server implements per open
// event stream. Everything transport-specific (uWS corking, backpressure bookkeeping, drain
// handlers) lives behind it; see http/sse-socket-sink-notes.md for the uWebSockets.js implementation.

export type SinkWriteResult =
  /** accepted; nothing known to be queued beyond this chunk */
  | 'ok'
  /** accepted but queued in user space; bufferedBytes() says how much */
  | 'backpressure'
  /** the connection is gone; the chunk was dropped */
  | 'closed';

export interface SseSink {
  /**
   * Queues `chunk` (whole SSE blocks) for the client. Must not throw, must not copy more than
   * the transport needs, and must return 'closed' once the connection is gone. The hub passes
   * the same Buffer to many sinks: do not modify it.
   */
  write(chunk: Buffer): SinkWriteResult;
  /** Bytes accepted by write() and not yet handed to the kernel (an upper bound is fine). */
  bufferedBytes(): number;
  /**
   * Ends the response. 'end': finish gracefully after what is queued (lifetime reached, replay
   * continues on reconnect, shutdown). 'abort': close now and drop the queue (a slow client
   * past its buffer bound). Called at most once by the hub, never after the server reported the
   * client gone through Subscription.close().
   */
  close(mode: 'end' | 'abort'): void;
}

/** Response headers of every event stream (the server adds its usual API headers). */
export const SSE_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([
  ['Content-Type', 'text/event-stream; charset=utf-8'],
  ['Cache-Control', 'no-store'],
  // nginx and similar proxies buffer responses unless told not to
  ['X-Accel-Buffering', 'no'],
] as const);
