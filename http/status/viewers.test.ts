import t from 'tap';
import type { StreamSink, StreamWriteResult } from '../types.ts';
import { StatusViewers } from './viewers.ts';

class FakeSink implements StreamSink {
  written: string[] = [];
  queued = 0;
  result: StreamWriteResult = 'ok';
  closed = false;
  closedAs: 'end' | 'abort' | null = null;
  private listeners: Array<() => void> = [];
  write(chunk: Buffer): StreamWriteResult {
    if (this.closed) return 'closed';
    this.written.push(chunk.toString());
    if (this.result === 'backpressure') this.queued += chunk.length;
    return this.result;
  }
  bufferedBytes(): number {
    return this.queued;
  }
  close(mode: 'end' | 'abort'): void {
    this.closedAs = mode;
    this.leave();
  }
  leave(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners.splice(0)) l();
  }
  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }
}

t.test('one encoding to every viewer; slow viewers are dropped, gone ones forgotten', async (t) => {
  const viewers = new StatusViewers({ pingMs: 20, retryMs: 3_000, bufferBytes: 100 });
  t.teardown(() => viewers.close());
  const fast = new FakeSink();
  const slow = new FakeSink();
  const gone = new FakeSink();
  viewers.add(fast, 'status', '{"n":1}');
  viewers.add(slow, 'status', '{"n":1}');
  viewers.add(gone, 'status', '{"n":1}');
  t.equal(fast.written[0], 'retry: 3000\n\nid: 1\nevent: status\ndata: {"n":1}\n\n');
  t.equal(viewers.count, 3);

  slow.result = 'backpressure';
  gone.result = 'closed';
  viewers.broadcast('status', '{"n":2}');
  t.equal(fast.written[1], 'id: 4\nevent: status\ndata: {"n":2}\n\n');
  t.equal(viewers.count, 2, 'a closed connection is forgotten');
  t.equal(slow.closedAs, null, 'some backpressure is fine');
  viewers.broadcast('status', `{"pad":"${'x'.repeat(100)}"}`);
  t.equal(slow.closedAs, 'abort', 'past its bound a viewer is cut');
  t.equal(viewers.dropped, 1);
  t.equal(viewers.count, 1);

  await new Promise((r) => setTimeout(r, 60));
  t.ok(fast.written.includes(': ping\n\n'), 'idle streams get pings');
  fast.leave();
  t.equal(viewers.count, 0);
  viewers.broadcast('status', '{}');

  const late = new FakeSink();
  late.leave();
  viewers.add(late, 'status', '{}');
  t.equal(viewers.count, 0, 'a connection gone before it was added is not kept');
  const last = new FakeSink();
  viewers.add(last, 'status', '{}');
  viewers.close();
  t.equal(last.closedAs, 'end', 'shutdown ends streams gracefully');
  t.equal(viewers.count, 0);
});
