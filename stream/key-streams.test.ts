import t from 'tap';
import { MemoryEventLog } from './event-log.ts';
import { StreamHub } from './hub.ts';
import { KeyStreams, REVOKED_FRAME } from './key-streams.ts';
import type { SinkWriteResult, SseSink } from './sse-sink.ts';
import { rawEvent } from '../test/support/events.ts';

class Sink implements SseSink {
  text = '';
  closedWith: 'end' | 'abort' | null = null;
  /** bytes queued and not yet read by the client */
  behind = 0;
  write(chunk: Buffer): SinkWriteResult {
    if (this.closedWith) return 'closed';
    this.text += chunk.toString('utf8');
    if (this.behind === 0) return 'ok';
    this.behind += chunk.length;
    return 'backpressure';
  }
  bufferedBytes(): number {
    return this.behind;
  }
  close(mode: 'end' | 'abort'): void {
    this.closedWith = mode;
  }
}

function hub(): StreamHub {
  return new StreamHub(
    { bufferBytes: 1024, pingIntervalMs: 60_000, maxConnectionMs: 3_600_000, coalesceMs: 0 },
    new MemoryEventLog({ capacity: 100 }),
  );
}

t.test('revoking a key ends its streams with the comment, and only its streams', async (t) => {
  t.equal(REVOKED_FRAME.toString(), ': revoked\n\n', 'an SSE comment line, then the blank line');
  const h = hub();
  const keys = new KeyStreams();
  const open = (key: string, sink: Sink) => {
    const subscription = h.openEvents({ filter: {} }).start(sink);
    keys.add(key, subscription);
    return subscription;
  };
  const a1 = new Sink();
  const a2 = new Sink();
  const b = new Sink();
  const reasons: string[] = [];
  open('key_a', a1).onClose((r) => reasons.push(r));
  open('key_a', a2).onClose((r) => reasons.push(r));
  open('key_b', b);
  t.equal(keys.count('key_a'), 2);
  // a reader at its buffer bound still gets the last words before the end
  a2.behind = 1024;
  t.equal(keys.revoke('key_a'), 2, 'both streams of the key');
  for (const sink of [a1, a2]) {
    t.ok(sink.text.endsWith(': revoked\n\n'), 'the comment is the last block');
    t.equal(sink.closedWith, 'end', 'ended after what is queued, not aborted');
  }
  t.same(reasons, ['revoked', 'revoked']);
  t.equal(h.stats().closed.revoked, 2, 'counted by reason');
  t.equal(keys.count('key_a'), 0);
  t.equal(b.closedWith, null, "another key's stream goes on");
  h.publish([rawEvent('alert.created', { data: { n: 1 } })]);
  h.flushEvents();
  t.match(b.text, /event: alert\.created/);
  t.notMatch(a1.text.split(': revoked')[1] ?? '', /event:/, 'nothing after the comment');
  t.equal(keys.revoke('key_a'), 0, 'revoking again is a no-op');

  // a stream whose request was authenticated before the revocation and started after it
  const late = new Sink();
  open('key_a', late);
  t.ok(keys.isRevoked('key_a'));
  t.ok(late.text.endsWith(': revoked\n\n'));
  t.equal(late.closedWith, 'end');

  // a stream closed by its client is forgotten
  const gone = new Sink();
  open('key_c', gone).close('client');
  t.equal(keys.count('key_c'), 0);
  t.equal(keys.revoke('key_c'), 0);
  t.equal(gone.text.includes('revoked'), false);
  h.close();
});
