// A broadcast topic of the hub (the status page's stream): the current state at once, one
// encoding per update for every reader, the hub's rules for slow, gone and idle readers, and
// framing that no value can break.
import t from 'tap';
import { MemoryEventLog } from './event-log.ts';
import { StreamHub, type HubOptions } from './hub.ts';
import type { SinkWriteResult, SseSink } from './sse-sink.ts';

class FakeSink implements SseSink {
  chunks: Buffer[] = [];
  buffered = 0;
  result: SinkWriteResult = 'ok';
  closedWith: 'end' | 'abort' | null = null;
  write(chunk: Buffer): SinkWriteResult {
    if (this.closedWith) return 'closed';
    if (this.result === 'closed') return 'closed';
    this.chunks.push(chunk);
    if (this.result === 'backpressure') this.buffered += chunk.length;
    return this.result;
  }
  bufferedBytes(): number {
    return this.buffered;
  }
  close(mode: 'end' | 'abort'): void {
    this.closedWith = mode;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The WHATWG event-stream algorithm: CRLF, CR and LF all end a line; a blank line dispatches. */
function parseEventStream(text: string): Array<{ id: string; event: string; data: string }> {
  const out: Array<{ id: string; event: string; data: string }> = [];
  let id = '';
  let event = '';
  let data = '';
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data !== '')
        out.push({ id, event: event || 'message', data: data.endsWith('\n') ? data.slice(0, -1) : data });
      event = '';
      data = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data += `${value}\n`;
    else if (field === 'id' && !value.includes('\0')) id = value;
  }
  return out;
}

function hub(overrides: Partial<HubOptions> = {}): StreamHub {
  return new StreamHub(
    { bufferBytes: 100, pingIntervalMs: 60_000, maxConnectionMs: 3_600_000, coalesceMs: 0, ...overrides },
    new MemoryEventLog({ capacity: 4 }),
  );
}

t.test('current state at once; one encoding per update to every reader; slow and gone readers dropped', async (t) => {
  const h = hub();
  t.teardown(() => h.close());
  const topic = h.broadcast('status');
  let current = '{"n":1}';
  const open = () => {
    const sink = new FakeSink();
    return { sink, subscription: h.openBroadcast('status', () => current).start(sink) };
  };
  const fast = open();
  const slow = open();
  const gone = open();
  t.equal(fast.sink.text(), 'retry: 3000\n\nid: 1\nevent: status\ndata: {"n":1}\n\n');
  t.equal(topic.subscriberCount, 3);

  let renders = 0;
  topic.publish(() => {
    renders++;
    return '{"n":2}';
  });
  t.equal(renders, 1, 'rendered once');
  t.equal(fast.sink.chunks[1], slow.sink.chunks[1], 'the same Buffer to every reader');

  slow.sink.result = 'backpressure';
  gone.sink.result = 'closed';
  topic.publish('{"n":3}');
  t.equal(topic.subscriberCount, 2, 'a closed connection is forgotten');
  t.equal(slow.sink.closedWith, null, 'some backpressure is fine');
  topic.publish(`{"pad":"${'x'.repeat(200)}"}`);
  topic.publish('{"n":4}');
  t.equal(slow.sink.closedWith, 'abort', 'past its bound a reader is cut');
  t.equal(h.stats().closed.slow, 1);
  t.equal(topic.subscriberCount, 1);

  h.ping();
  t.match(fast.sink.text(), /: ping\n\n$/, "readers get the hub's pings");
  fast.subscription.close('client');
  t.equal(topic.subscriberCount, 0);
  topic.publish(() => {
    renders++;
    return '{}';
  });
  t.equal(renders, 1, 'nothing is rendered for a topic nobody reads');

  current = '{"n":5}';
  const last = open();
  t.match(last.sink.text(), /data: \{"n":5\}/, 'a new reader gets the state of now');
  h.close();
  t.equal(last.sink.closedWith, 'end', 'shutdown ends streams gracefully');
  t.equal(topic.subscriberCount, 0);
});

t.test('CR and LF in a value cannot end a field or inject an event', async (t) => {
  const h = hub({ bufferBytes: 64 * 1024 });
  t.teardown(() => h.close());
  const evil = 'feed "a"\r\nevent: admin\r\nid: 999\n\ndata: injected\rretry: 1';
  const sink = new FakeSink();
  h.openBroadcast('status', () => evil).start(sink);
  h.broadcast('status').publish(JSON.stringify({ name: evil }));
  h.broadcast('status').publish(evil);
  const events = parseEventStream(sink.text());
  t.same(
    events.map((e) => e.event),
    ['status', 'status', 'status'],
    'exactly the events published, all named status',
  );
  t.same(
    events.map((e) => e.id),
    ['1', '2', '3'],
    "ids are the topic's own",
  );
  t.equal(
    events[0]!.data,
    evil.replace(/\r\n|\r/g, '\n'),
    'the value arrives as data lines (line ends normalized to LF)',
  );
  t.same(JSON.parse(events[1]!.data), { name: evil }, 'JSON survives byte for byte');
  t.notMatch(sink.text(), /\r/, 'no CR reaches the wire');
  const fields = sink
    .text()
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('data: '));
  t.same(
    fields,
    ['retry: 3000', 'id: 1', 'event: status', 'id: 2', 'event: status', 'id: 3', 'event: status'],
    'no line of the value became a field',
  );
  t.throws(
    () => h.broadcast('other', 'bad\nname'),
    /must not contain CR or LF/,
    'an event name with a line break is refused',
  );
});
