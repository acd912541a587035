// The socket layer on its own: large bodies under backpressure, aborted clients, request bodies,
// streams, shutdown with idle and busy connections, signals.
import { freePort } from '../test/support/wait.ts';
import { createHash } from 'node:crypto';
import { connect, createServer } from 'node:net';
import t from 'tap';
import { baseHeaders } from './headers.ts';
import { checkPortFree, ListenError } from './listen.ts';
import { captureLogs, logInto } from '../test/support/logs.ts';
import { assertNativeUws, closeOnSignals, startServer, type Handler } from './server.ts';
import type { ApiRequest, ApiResponse, StreamSink } from './types.ts';
import { StreamReply } from './types.ts';

const BIG = Buffer.alloc(8 * 1024 * 1024, 'abcdefghijklmnopqrstuvwxyz');
const BIG_STRING = 'x'.repeat(300_000);

function handler(overrides: Partial<Record<string, (req: ApiRequest) => Promise<ApiResponse> | ApiResponse>> = {}) {
  const seen: ApiRequest[] = [];
  const sinks: StreamSink[] = [];
  let closed = 0;
  const h: Handler & { seen: ApiRequest[]; sinks: StreamSink[]; closed: () => number } = {
    seen,
    sinks,
    closed: () => closed,
    async handle(req) {
      seen.push(req);
      const custom = overrides[req.path];
      if (custom) return custom(req);
      const headers = baseHeaders('req_t', 'request');
      if (req.path === '/big') return { status: 200, headers, body: BIG };
      if (req.path === '/big-string') return { status: 200, headers, body: BIG_STRING };
      if (req.path === '/echo') return { status: 200, headers, body: req.body ?? new Uint8Array() };
      if (req.path === '/head') return { status: 200, headers, body: 'twelve bytes', omitBody: true };
      if (req.path === '/stream') {
        return {
          status: 200,
          headers,
          body: '',
          stream: new StreamReply((sink) => {
            sinks.push(sink);
            sink.write(Buffer.from('event: hello\ndata: 1\n\n'));
          }),
        };
      }
      return { status: 404, headers, body: 'no' };
    },
    async close() {
      closed++;
    },
  };
  return h;
}

t.test('the native binary is loaded', async (t) => {
  t.doesNotThrow(() => assertNativeUws());
});

t.test('large bodies arrive whole, also to a slow reader', async (t) => {
  const app = handler();
  const server = await startServer({ handler: app, port: 0 });
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/big`);
  const body = Buffer.from(await res.arrayBuffer());
  t.equal(body.length, BIG.length);
  t.equal(createHash('sha1').update(body).digest('hex'), createHash('sha1').update(BIG).digest('hex'));
  t.equal((await (await fetch(`http://127.0.0.1:${server.port}/big-string`)).text()).length, BIG_STRING.length);

  // a reader that stalls: the server must wait on onWritable and resume at the right offset
  const received = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (chunks.length === 1) {
        socket.pause();
        setTimeout(() => socket.resume(), 300);
      }
      const all = Buffer.concat(chunks);
      const head = all.indexOf('\r\n\r\n');
      if (head > 0 && all.length - head - 4 >= BIG.length) {
        socket.destroy();
        resolve(all.subarray(head + 4));
      }
    });
    socket.on('error', reject);
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
  });
  t.ok(received.equals(BIG), 'every byte, in order');
  t.equal(server.inFlight, 0);
});

t.test('a client that goes away mid-body does not hurt the server', async (t) => {
  const app = handler();
  const server = await startServer({ handler: app, port: 0 });
  t.teardown(() => server.close());
  await new Promise<void>((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    socket.once('data', () => {
      socket.pause();
      socket.destroy();
      resolve();
    });
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
  });
  const deadline = Date.now() + 5_000;
  while (server.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(server.inFlight, 0, 'the aborted exchange is finished');
  t.equal(
    (await fetch(`http://127.0.0.1:${server.port}/head`, { method: 'HEAD' })).headers.get('content-length'),
    '12',
  );
});

t.test('an answer given at once (handleNow) is written inside the request handler, large ones too', async (t) => {
  const app = handler();
  const now: Handler = {
    handle: (req) => app.handle(req),
    // what the request chain does for a cached body: no Promise
    handleNow: (req) =>
      req.path === '/big' ? { status: 200, headers: baseHeaders('req_n', 'request'), body: BIG } : app.handle(req),
    close: () => app.close(),
  };
  const server = await startServer({ handler: now, port: 0 });
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/big`);
  t.ok(Buffer.from(await res.arrayBuffer()).equals(BIG), 'a body larger than the socket takes at once arrives whole');
  t.equal(
    (await fetch(`http://127.0.0.1:${server.port}/head`, { method: 'HEAD' })).headers.get('content-length'),
    '12',
    'the Promise path still works',
  );
  // a client leaving in the middle of a body answered at once: the exchange still finishes
  await new Promise<void>((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    socket.once('data', () => {
      socket.pause();
      socket.destroy();
      resolve();
    });
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
  });
  const deadline = Date.now() + 5_000;
  while (server.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(server.inFlight, 0, 'the aborted exchange is finished');
});

t.test('HEAD, 204 and 304 leave the connection usable for the next request', async (t) => {
  const app = handler({
    '/empty': () => ({ status: 204, headers: [], body: '' }),
    '/same': () => ({ status: 304, headers: [['ETag', '"x"']], body: '' }),
  });
  const server = await startServer({ handler: app, port: 0 });
  t.teardown(() => server.close());
  const socket = connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let text = '';
  socket.on('data', (c) => {
    text += c.toString('latin1');
  });
  const send = async (line: string, until: number) => {
    socket.write(`${line}\r\nHost: x\r\n\r\n`);
    const deadline = Date.now() + 5_000;
    while ((text.match(/HTTP\/1\.1 /g) ?? []).length < until && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
  };
  await send('HEAD /head HTTP/1.1', 1);
  await send('GET /empty HTTP/1.1', 2);
  await send('GET /same HTTP/1.1', 3);
  await send('GET /echo HTTP/1.1', 4);
  const responses = text.split(/(?=HTTP\/1\.1 )/);
  t.equal(responses.length, 4, 'all four answered on one connection');
  t.match(responses[0], /Content-Length: 12\r\n/);
  t.notMatch(responses[1], /Content-Length/i, 'no Content-Length on 204');
  t.match(responses[2], /^HTTP\/1\.1 304 /);
});

t.test('request bodies, chunked and oversized', async (t) => {
  const app = handler();
  const server = await startServer({ handler: app, port: 0, maxBodyBytes: 1000 });
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${server.port}/echo`;
  const plain = await fetch(url, { method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain' } });
  t.equal(await plain.text(), 'hello');
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('chunk one, '));
      controller.enqueue(new TextEncoder().encode('chunk two'));
      controller.close();
    },
  });
  const chunked = await fetch(url, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
  t.equal(await chunked.text(), 'chunk one, chunk two');
  const big = await fetch(url, { method: 'POST', body: 'y'.repeat(5000) });
  t.equal(
    (await big.arrayBuffer()).byteLength,
    1001,
    'cut one byte past the limit, for the request chain to answer 413',
  );
  const get = await fetch(url);
  t.equal((await get.arrayBuffer()).byteLength, 0, 'no body read for GET');
  t.equal(app.seen.at(-1)!.method, 'GET');
});

t.test('streams: headers at once, writes corked, ended on close', async (t) => {
  const app = handler();
  const server = await startServer({ handler: app, port: 0 });
  const res = await fetch(`http://127.0.0.1:${server.port}/stream`);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('event: hello')) text += new TextDecoder().decode((await reader.read()).value);
  t.equal(server.openStreams, 1);
  const sink = app.sinks[0]!;
  t.equal(sink.write(Buffer.from('event: more\ndata: 2\n\n')), 'ok');
  while (!text.includes('event: more')) text += new TextDecoder().decode((await reader.read()).value);
  let closedListener = false;
  sink.onClose(() => {
    closedListener = true;
  });
  await server.close();
  t.ok(sink.closed);
  t.ok(closedListener);
  t.equal(sink.write(Buffer.from('late')), 'closed', 'writes after close are refused');
  let done = false;
  while (!done) done = (await reader.read()).done;
  t.equal(server.openStreams, 0);
  t.equal(app.closed(), 1, 'the app was closed once');
});

t.test('a client that leaves a stream closes its sink', async (t) => {
  const app = handler();
  const server = await startServer({ handler: app, port: 0 });
  t.teardown(() => server.close());
  const controller = new AbortController();
  const res = await fetch(`http://127.0.0.1:${server.port}/stream`, { signal: controller.signal });
  await res.body!.getReader().read();
  const sink = app.sinks[0]!;
  let notified = false;
  sink.onClose(() => {
    notified = true;
  });
  controller.abort();
  const deadline = Date.now() + 5_000;
  while (!sink.closed && Date.now() < deadline) {
    sink.write(Buffer.from(': ping\n\n'));
    await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(sink.closed);
  t.ok(notified);
  t.equal(server.openStreams, 0);
});

t.test('shutdown: busy connections finish, idle keep-alive ones get 503, new ones are refused', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const app = handler({
    '/slow': async () => {
      await gate;
      return { status: 200, headers: [], body: 'done' };
    },
  });
  const server = await startServer({ handler: app, port: 0, shutdownTimeoutMs: 5_000 });
  const idle = connect(server.port, '127.0.0.1');
  const idleData: Buffer[] = [];
  idle.on('data', (c) => idleData.push(c));
  idle.write('GET /echo HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!Buffer.concat(idleData).includes('\r\n\r\n')) await new Promise((r) => setTimeout(r, 10));
  idleData.length = 0;
  const slow = fetch(`http://127.0.0.1:${server.port}/slow`).then(
    (r) => r.text(),
    (err: Error) => `failed: ${err.message}`,
  );
  while (server.inFlight === 0) await new Promise((r) => setTimeout(r, 10));
  const closing = server.close();
  idle.write('GET /echo HTTP/1.1\r\nHost: x\r\n\r\n');
  const deadline = Date.now() + 5_000;
  while (!Buffer.concat(idleData).includes('\r\n\r\n') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  t.match(Buffer.concat(idleData).toString(), /^HTTP\/1\.1 503 /, 'a request on an old connection during shutdown');
  await t.rejects(fetch(`http://127.0.0.1:${server.port}/head`, { headers: { connection: 'close' } }));
  release();
  t.equal(await slow, 'done');
  await closing;
  idle.destroy();
});

t.test('a handler that rejects still gets an answer', async (t) => {
  const logged: unknown[] = [];
  const app = handler({ '/reject': () => Promise.reject(new Error('bug')) });
  const server = await startServer({ handler: app, port: 0, log: logInto((_m, line) => logged.push(line.err)) });
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/reject`);
  t.equal(res.status, 500);
  t.match(await res.json(), { code: 'internal' });
  t.equal(logged.length, 1);
});

t.test('a port is never shared: a second server on it fails, saying why', async (t) => {
  const app = handler();
  // a port given by number: uWS's default SO_REUSEPORT shares those, where port 0 never is
  const first = await startServer({ handler: app, port: await freePort() });
  t.teardown(() => first.close());
  const second = startServer({ handler: handler(), port: first.port });
  await t.rejects(second, ListenError);
  await t.rejects(second, {
    code: 'EADDRINUSE',
    port: first.port,
    message: /could not listen on 127\.0\.0\.1:\d+: the port is already in use/,
  });
  for (let i = 0; i < 6; i++) await fetch(`http://127.0.0.1:${first.port}/nothing`);
  t.equal(app.seen.length, 6, 'every request still reaches the first server');
});

t.test('a port held by another program fails the same way, and is found before listening', async (t) => {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.teardown(() => other.close());
  const port = (other.address() as { port: number }).port;
  await t.rejects(startServer({ handler: handler(), port }), { name: 'ListenError', code: 'EADDRINUSE', port });
  await t.rejects(checkPortFree('127.0.0.1', port), { name: 'ListenError', code: 'EADDRINUSE', port });
  await t.resolves(checkPortFree('127.0.0.1', 0), 'port 0 is always free');
});

t.test('a free port is found free, and stays free to listen on', async (t) => {
  const port = await freePort();
  await checkPortFree('127.0.0.1', port);
  const server = await startServer({ handler: handler(), port });
  t.teardown(() => server.close());
  t.equal(server.port, port);
  await t.rejects(checkPortFree('127.0.0.1', port), { code: 'EADDRINUSE' }, "the server's own listen is seen as taken");
});

t.test('signals close once, a second signal exits at once', async (t) => {
  const exits: number[] = [];
  let closes = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => {
    finish = r;
  });
  const logs = captureLogs();
  const remove = closeOnSignals(
    async () => {
      closes++;
      await done;
    },
    (code) => exits.push(code),
    logs.logger,
  );
  t.teardown(remove);
  process.emit('SIGTERM', 'SIGTERM');
  process.emit('SIGINT', 'SIGINT');
  t.same(exits, [130]);
  finish();
  await new Promise((r) => setTimeout(r, 10));
  t.same(exits, [130, 0]);
  t.equal(closes, 1);
  t.match(
    logs.lines,
    [{ msg: 'finishing in-flight requests, then exiting', signal: 'SIGTERM' }],
    'the first signal is logged once',
  );
});
