import { connect } from 'node:net';
import t from 'tap';
import { headerBlock } from './header-block.ts';
import { apiRun, HeaderRun, pushRequestHeaders, sharedHeader, type HeaderList } from './headers.ts';
import { startServer, type Handler } from './server.ts';
import type { ApiRequest, ApiResponse } from './types.ts';

/** What one writeHeader call per header would have written. */
function oneByOne(headers: HeaderList): string {
  return headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
}

/** What the single call writes: uWS puts `name: ` before the value and `\r\n` after it. */
function asOneCall(headers: HeaderList): string {
  return `${headers[0]![0]}: ${headerBlock(headers)}\r\n`;
}

t.test('one call writes the section one call per header would, in order', async (t) => {
  const shared = sharedHeader('X-API-Version', '1.0.0');
  const lists: HeaderList[] = [
    [['X-Request-Id', 'req_1']],
    [shared],
    [shared, ['X-Request-Id', 'req_abc'], sharedHeader('Vary', 'Accept-Encoding'), ['ETag', '"abc"']],
    [['Content-Disposition', "attachment; filename*=UTF-8''caf%C3%A9.csv"], shared, ['X-Empty', '']],
    [['X-Note', 'café ☕ ok'], shared, ['X-Other', 'naïve']],
  ];
  for (const headers of lists) t.equal(asOneCall(headers), oneByOne(headers), JSON.stringify(headers));
});

t.test('shared headers are frozen and carry their line; others are read at each call', async (t) => {
  const shared = sharedHeader('X-A', 'b');
  t.ok(Object.isFrozen(shared));
  t.same([...shared], ['X-A', 'b'], 'still a [name, value] tuple to everyone else');
  const changing: [string, string] = ['X-Remaining', '5'];
  t.equal(asOneCall([shared, changing]), oneByOne([shared, changing]));
  changing[1] = '4';
  t.equal(asOneCall([shared, changing]), oneByOne([shared, changing]), 'an unshared tuple is never cached');
});

t.test('a run is its headers joined once; it lists shared headers only', async (t) => {
  const run = apiRun('request', 600).followedBy([sharedHeader('Content-Type', 'application/json')]);
  const tail = [sharedHeader('X-Tail', 'one')];
  t.equal(apiRun('request', 600).followedBy(tail), apiRun('request', 600).followedBy(tail), 'made once per tail');
  const headers = pushRequestHeaders(run.start(), 'req_x', null, 0);
  t.equal(`${run.list[0]![0]}: ${run.block}\r\n`, oneByOne([...run.list]));
  t.same(
    headers.map(([name]) => name),
    [
      'X-API-Version',
      'Access-Control-Allow-Origin',
      'Access-Control-Expose-Headers',
      'X-Content-Type-Options',
      'X-Meter-Unit',
      'X-RateLimit-Policy',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'Content-Type',
      'X-Request-Id',
    ],
  );
  t.throws(() => new HeaderRun([['X-Not', 'shared']]), /shared headers only/);
});

/** The raw header section a server wrote for GET `path`. */
async function rawHead(port: number, path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(text.slice(0, end).split('\r\n').slice(1));
      }
    });
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

t.test('the socket writes a run and the rest in order; a run that is not the start is ignored', async (t) => {
  const run = apiRun('request', 6000).followedBy([sharedHeader('Content-Type', 'application/json')]);
  const own: HeaderList = [
    ['X-Request-Id', 'req_1'],
    ['RateLimit', '"5m";r=5999;t=300'],
    ['ETag', '"é"'],
  ];
  const handler: Handler = {
    handle: async (req: ApiRequest): Promise<ApiResponse> => {
      if (req.path === '/run') return { status: 200, headers: [...run.start(), ...own], run, body: '{}' };
      // a run that does not start the list: its block must not be written
      return { status: 200, headers: own, run, body: '{}' };
    },
    close: async () => undefined,
  };
  const server = await startServer({ handler, port: 0 });
  t.teardown(() => server.close());
  const withoutServerOwn = (lines: string[]) =>
    lines.filter((line) => !/^(Date|uWebSockets|Content-Length): /i.test(line));
  t.same(
    withoutServerOwn(await rawHead(server.port, '/run')),
    [...run.list, ...own].map(([name, value]) => Buffer.from(`${name}: ${value}`, 'utf8').toString('latin1')),
  );
  t.same(
    withoutServerOwn(await rawHead(server.port, '/other')),
    own.map(([name, value]) => Buffer.from(`${name}: ${value}`, 'utf8').toString('latin1')),
  );
});
