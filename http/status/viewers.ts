// The open /status/stream connections. An update is encoded once and the same Buffer written to
// every viewer; a viewer further behind than its bound is dropped (EventSource reconnects by
// itself and gets the current page at once) rather than allowed to hold memory or slow others.
import type { StreamSink } from '../types.ts';

const PING = Buffer.from(': ping\n\n');

export interface ViewerOptions {
  pingMs: number;
  retryMs: number;
  /** bytes a viewer may have queued before it is dropped */
  bufferBytes: number;
}

export class StatusViewers {
  private readonly sinks = new Set<StreamSink>();
  private nextId = 1;
  private pingTimer: NodeJS.Timeout | null = null;
  /** viewers dropped for being too slow */
  dropped = 0;

  constructor(private readonly options: ViewerOptions) {}

  get count(): number {
    return this.sinks.size;
  }

  /** Registers a viewer and sends it `first` at once, so a new page is current without waiting. */
  add(sink: StreamSink, event: string, first: string): void {
    if (sink.closed) return;
    this.sinks.add(sink);
    sink.onClose(() => this.sinks.delete(sink));
    this.send(sink, Buffer.from(`retry: ${this.options.retryMs}\n\n${this.frame(event, first)}`));
    this.startPings();
  }

  /** `data` is one line of JSON (JSON.stringify never emits a raw line break). */
  broadcast(event: string, data: string): void {
    if (this.sinks.size === 0) return;
    this.sendAll(Buffer.from(this.frame(event, data)));
  }

  /** Ends every stream after what is queued (shutdown). */
  close(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    const sinks = [...this.sinks];
    this.sinks.clear();
    for (const sink of sinks) sink.close('end');
  }

  private frame(event: string, data: string): string {
    return `id: ${this.nextId++}\nevent: ${event}\ndata: ${data}\n\n`;
  }

  private sendAll(chunk: Buffer): void {
    for (const sink of [...this.sinks]) this.send(sink, chunk);
  }

  private send(sink: StreamSink, chunk: Buffer): void {
    const result = sink.write(chunk);
    if (result === 'closed') {
      this.sinks.delete(sink);
    } else if (result === 'backpressure' && sink.bufferedBytes() > this.options.bufferBytes) {
      this.sinks.delete(sink);
      this.dropped++;
      sink.close('abort');
    }
  }

  private startPings(): void {
    if (this.pingTimer) return;
    // one shared tick for every viewer keeps idle proxies from closing quiet streams
    this.pingTimer = setInterval(() => this.sendAll(PING), this.options.pingMs);
    this.pingTimer.unref();
  }
}
