// SseSink over a uWebSockets.js HttpResponse, written to be moved into http/server.ts as is
// (see stream/uws-sink-notes.md). Numbers refer to the pitfalls in sse-fanout-notes.md.
import type { HttpResponse } from 'uWebSockets.js';
import type { SinkWriteResult, SseSink } from '../../stream/sse-sink.ts';

/** A comment line: the drain handler must write something for uWS to flush its buffer (4). */
const DRAIN = Buffer.from(':\n\n');

export class UwsSseSink implements SseSink {
  /**
   * Bytes uWS may still hold for this client (an upper bound). uWS does not expose its buffer
   * (3: getWriteOffset only moves for tryEnd) and a corked write reports success even when the
   * flush after it fails (2), so: after a successful write at most that chunk can be queued;
   * after a failed one everything since the last success is; a drain that succeeds empties it.
   */
  private queued = 0;
  private gone = false;
  private chunk: Buffer | null = null;
  private lastWriteOk = true;
  // one bound function per sink: no closure allocated per write on the fan-out path
  private readonly corkedWrite = (): void => {
    this.lastWriteOk = this.res.write(this.chunk!);
  };

  constructor(private readonly res: HttpResponse) {
    // registered at once: without it a drained socket keeps a 10 s timeout that kills it (5)
    res.onWritable(() => {
      if (this.gone) return true;
      const ok = this.res.write(DRAIN);
      if (ok) this.queued = 0;
      return ok;
    });
  }

  /** The server calls this first thing in res.onAborted: the response must not be touched after. */
  aborted(): void {
    this.gone = true;
  }

  get isGone(): boolean {
    return this.gone;
  }

  /** Status and headers, corked (1); call before the hub's first write. */
  writeHead(status: string, headers: ReadonlyArray<readonly [string, string]>): void {
    if (this.gone) return;
    this.res.cork(() => {
      this.res.writeStatus(status);
      for (const [name, value] of headers) this.res.writeHeader(name, value);
    });
  }

  write(chunk: Buffer): SinkWriteResult {
    if (this.gone) return 'closed';
    this.chunk = chunk;
    // every write outside a request handler must be corked (1)
    this.res.cork(this.corkedWrite);
    this.chunk = null;
    if (this.gone) return 'closed';
    if (this.lastWriteOk) {
      this.queued = chunk.length;
      return 'ok';
    }
    this.queued += chunk.length;
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
  }
}
