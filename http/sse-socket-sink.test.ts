// The event-stream sink against a socket double that behaves as uWS does where it matters: writes
// outside a cork are refused, a write can report failure, close() runs the abort handler at once.
import t from 'tap';
import { SendBudget } from '../stream/send-budget.ts';
import { SseSocketSink, type SseSocket } from './sse-socket-sink.ts';

class Socket implements SseSocket {
  written: string[] = [];
  /** what the next write() returns */
  accept = true;
  corked = false;
  ended = false;
  closed = false;
  writable: ((offset: number) => boolean) | null = null;
  /** uWS runs onAborted synchronously inside close() */
  onClose: (() => void) | null = null;

  write(chunk: Buffer): boolean {
    if (!this.corked && this.writable === null) throw new Error('write before onWritable was registered');
    this.written.push(chunk.toString('utf8'));
    return this.accept;
  }
  cork(fn: () => void): void {
    this.corked = true;
    try {
      fn();
    } finally {
      this.corked = false;
    }
  }
  onWritable(handler: (offset: number) => boolean): void {
    this.writable = handler;
  }
  close(): void {
    this.closed = true;
    this.onClose?.();
  }
  end(): void {
    if (!this.corked) throw new Error('end outside a cork');
    this.ended = true;
  }
}

const frame = (text: string) => Buffer.from(`data: ${text}\n\n`);

function open(limit = 1_000, budget?: SendBudget) {
  const socket = new Socket();
  const ended: SseSocketSink[] = [];
  const sink = new SseSocketSink(socket, limit, (s) => ended.push(s), budget);
  socket.onClose = () => sink.aborted();
  return { socket, sink, ended };
}

t.test('writes are corked; a write that goes through leaves at most its chunk held', async (t) => {
  const { socket, sink } = open();
  t.ok(socket.writable, 'onWritable registered at once');
  t.equal(sink.write(frame('a')), 'ok');
  t.same(socket.written, ['data: a\n\n']);
  t.equal(sink.bufferedBytes(), frame('a').length);
  t.notOk(sink.closed);
});

t.test('a failed write is backpressure: bytes add up until a drain write goes through', async (t) => {
  const { socket, sink } = open();
  socket.accept = false;
  t.equal(sink.write(frame('a')), 'backpressure');
  t.equal(sink.write(frame('b')), 'backpressure');
  t.equal(sink.bufferedBytes(), 2 * frame('a').length);
  t.equal(socket.writable!(0), false, 'a drain write that fails keeps the count');
  t.equal(sink.bufferedBytes(), 2 * frame('a').length);
  socket.accept = true;
  t.equal(socket.writable!(0), true);
  t.equal(socket.written.at(-1), ':\n\n', 'the drain write is a comment line');
  t.equal(sink.bufferedBytes(), 0);
});

t.test('past the hard limit the stream is dropped, whatever the producer does', async (t) => {
  const { socket, sink, ended } = open(10);
  const closes: string[] = [];
  sink.onClose(() => closes.push('closed'));
  socket.accept = false;
  t.equal(sink.write(frame('0123456789')), 'backpressure', 'one large chunk gets through');
  t.equal(sink.write(frame('x')), 'closed', 'what was held before this chunk is past the limit');
  t.ok(socket.closed, 'the connection is dropped (its queue with it)');
  t.ok(sink.closed);
  t.same(ended, [sink], 'the server forgets it');
  t.same(closes, ['closed'], 'listeners run once');
  t.equal(sink.write(frame('y')), 'closed');
});

t.test("close('end') ends after what is queued; a second close and later writes do nothing", async (t) => {
  const { socket, sink, ended } = open();
  sink.write(frame('a'));
  sink.close('end');
  t.ok(socket.ended);
  t.notOk(socket.closed);
  sink.close('abort');
  t.notOk(socket.closed, 'closed once');
  t.equal(sink.write(frame('b')), 'closed');
  t.equal(socket.written.length, 1);
  t.same(ended, [sink]);
  let late = false;
  sink.onClose(() => {
    late = true;
  });
  t.ok(late, 'a listener added after the end runs at once');
});

t.test('a client that left: the response is not touched again', async (t) => {
  const { socket, sink } = open();
  let told = 0;
  sink.onClose(() => told++);
  sink.onClose(() => {
    throw new Error('a failing listener');
  });
  sink.onClose(() => told++);
  sink.aborted();
  t.equal(told, 2, 'every listener ran despite the one that threw');
  t.equal(sink.write(frame('a')), 'closed');
  sink.close('end');
  t.notOk(socket.ended);
  t.same(socket.written, []);
});

t.test('every sink reports to the shared send budget, which cuts the one over it', async (t) => {
  const budget = new SendBudget({ budgetBytes: 30, stallTimeoutMs: 60_000 });
  const a = open(1_000, budget);
  const b = open(1_000, budget);
  a.socket.accept = false;
  b.socket.accept = false;
  t.equal(a.sink.write(frame('0123456789')), 'backpressure');
  t.equal(budget.bufferedBytes, frame('0123456789').length);
  t.equal(b.sink.write(frame('0123456789')), 'backpressure', 'the budget is exceeded by the second stream…');
  t.ok(a.sink.closed, '…and the longest stalled is cut first');
  t.ok(a.socket.closed, 'dropped with its queue');
  t.equal(a.sink.cutReason, 'budget');
  t.notOk(b.sink.closed);
  t.equal(budget.bufferedBytes, frame('0123456789').length, 'what the cut stream held left the budget');
  a.sink.close('abort');
  b.sink.close('abort');
  t.equal(budget.bufferedBytes, 0, 'a closed sink holds nothing');
});
