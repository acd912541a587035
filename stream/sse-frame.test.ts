import t from 'tap';
import { frame, frameBytes, SseFrameError } from './sse-frame.ts';

/** A small SSE parser following the WHATWG algorithm, to check frames round-trip. */
function parse(text: string): Array<{ id?: string; event: string; data: string; retry?: number }> {
  const events: Array<{ id?: string; event: string; data: string; retry?: number }> = [];
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  let retry: number | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length) events.push({ id, event: event || 'message', data: data.join('\n'), retry });
      data = [];
      event = '';
      retry = undefined;
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'retry') retry = Number(value);
  }
  return events;
}

t.test('a full event', async (t) => {
  const text = frame({ id: 42, event: 'update', data: '{"id":"1","type":"vehicle"}' });
  t.equal(text, 'id: 42\nevent: update\ndata: {"id":"1","type":"vehicle"}\n\n');
  t.same(parse(text), [{ id: '42', event: 'update', data: '{"id":"1","type":"vehicle"}', retry: undefined }]);
});

t.test('data is split on every kind of line break and joined back by the client', async (t) => {
  const text = frame({ data: 'a\r\nb\rc\nd' });
  t.equal(text, 'data: a\ndata: b\ndata: c\ndata: d\n\n');
  t.equal(parse(text)[0]?.data, 'a\nb\nc\nd');
  t.equal(frame({ data: '' }), 'data: \n\n', 'empty data is one empty data line');
  t.equal(parse(frame({ data: ' leading space' }))[0]?.data, ' leading space');
  t.equal(parse(frame({ data: 'trailing\n' }))[0]?.data, 'trailing\n');
});

t.test('id and event refuse line breaks instead of letting a field be injected', async (t) => {
  t.throws(() => frame({ id: '1\ndata: injected', data: 'x' }), SseFrameError);
  t.throws(() => frame({ id: '1\r2' }), SseFrameError);
  t.throws(() => frame({ id: 'a\0b' }), SseFrameError);
  t.throws(() => frame({ event: 'reset\nid: 9', data: 'x' }), SseFrameError);
  t.throws(() => frame({ event: 'a\rb' }), SseFrameError);
  t.throws(() => frame({ event: '' }), SseFrameError);
});

t.test('retry, comments and pings', async (t) => {
  t.equal(frame({ retry: 3000 }), 'retry: 3000\n\n');
  t.throws(() => frame({ retry: -1 }), SseFrameError);
  t.throws(() => frame({ retry: 1.5 }), SseFrameError);
  t.throws(() => frame({ retry: Number.NaN }), SseFrameError);
  t.equal(frame({ comment: 'ping' }), ': ping\n\n');
  t.equal(frame({ comment: 'two\nlines' }), ': two\n: lines\n\n');
  t.equal(frame({ comment: '' }), ':\n\n');
  t.same(parse(frame({ comment: 'ping' })), [], 'a comment dispatches nothing');
  t.same(parse(frame({ retry: 3000, data: 'x' }))[0]?.retry, 3000);
});

t.test('bytes are UTF-8', async (t) => {
  const bytes = frameBytes({ event: 'add', data: 'Gare du Nord → Châtelet' });
  t.ok(Buffer.isBuffer(bytes));
  t.equal(bytes.toString('utf8'), 'event: add\ndata: Gare du Nord → Châtelet\n\n');
  t.ok(bytes.length > 'event: add\ndata: Gare du Nord → Châtelet\n\n'.length, 'multi-byte characters counted in bytes');
});
