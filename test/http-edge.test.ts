// Malformed and oversized HTTP over raw sockets (issue 15). What uWebSockets.js hands over is
// answered with a problem+json and `Connection: close` (400, 408, 414, 431, 501); what it never
// hands over is documented in docs/guides/api.md ("HTTP edge cases") and pinned here: no status line,
// and the server goes on serving everyone else.
import t, { type Test } from 'tap';
import { MAX_HEADER_BYTES, MAX_TARGET_BYTES } from '../http/http-edge.ts';
import { startHarness } from './support/harness.ts';
import { rawRequest, type RawResponse } from './support/raw-http.ts';

t.test('HTTP edge cases', async (t) => {
  const h = await startHarness({ quiet: true });
  t.teardown(() => h.close());
  const port = h.server.port;
  const send = (bytes: string, timeoutMs = 5_000) => rawRequest(port, bytes, { timeoutMs });
  const refused = (t: Test, r: RawResponse | null, status: number, code: string, what: string) => {
    t.equal(r?.status, status, what);
    t.equal(r?.headers.connection, 'close', `${what}: Connection: close`);
    t.equal(r?.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
    t.match(JSON.parse(r?.body ?? '{}'), { code, status }, `${what}: ${code}`);
  };

  t.test('answered: target and header limits, framing the HTTP layer passes on', async (t) => {
    refused(
      t,
      await send(`GET /api/v1/alerts?x=${'a'.repeat(MAX_TARGET_BYTES)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      414,
      'uri_too_long',
      'a long URL',
    );
    refused(
      t,
      await send(`GET /docs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`),
      431,
      'headers_too_large',
      'a 16 KiB header',
    );
    refused(
      t,
      await send(`GET /docs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
      431,
      'headers_too_large',
      'a 64 KiB header',
    );
    refused(
      t,
      await send('GET /docs HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n'),
      400,
      'malformed_request',
      'two Host headers',
    );
    refused(
      t,
      await send(
        'POST /api/v1/webhooks/endpoints HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      ),
      400,
      'malformed_request',
      'two Content-Lengths',
    );
    refused(
      t,
      await send('POST /api/v1/webhooks/endpoints HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc'),
      501,
      'not_implemented',
      'an unknown transfer coding',
    );
  });

  t.test('answered: a body that stops arriving gets 408 before the idle timeout', async (t) => {
    refused(
      t,
      await send('POST /api/v1/webhooks/endpoints HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":1}', 15_000),
      408,
      'request_timeout',
      'a short body',
    );
  });

  t.test('not answerable: uWebSockets.js drops these without a status line (api.md, HTTP edge cases)', async (t) => {
    const headers = Array.from({ length: 60 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const cases: Record<string, string> = {
      '60 headers': `GET /docs HTTP/1.1\r\nHost: x\r\n${headers}\r\n`,
      'no Host': 'GET /docs HTTP/1.1\r\n\r\n',
      'absolute-form target': 'GET http://x/docs HTTP/1.1\r\nHost: x\r\n\r\n',
      'LF-only line ends': 'GET /docs HTTP/1.1\nHost: x\n\n',
      'a header without a colon': 'GET /docs HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n',
      'a NUL in the path': 'GET /do\0cs HTTP/1.1\r\nHost: x\r\n\r\n',
      'the HTTP/2 preface': 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'a Content-Length that is not a number':
        'POST /api/v1/webhooks/endpoints HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'a 256 KiB header (reset)': `GET /docs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(256 * 1024)}\r\n\r\n`,
      'a 1 MiB URL (reset)': `GET /${'a'.repeat(1024 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    };
    const results = await Promise.all(
      Object.entries(cases).map(async ([name, bytes]) => [name, await send(bytes, 15_000)] as const),
    );
    // if one of these ever gets a status line, the HTTP layer learned to answer it: answer it well
    for (const [name, r] of results) t.equal(r, null, `${name}: closed without a status line`);
    const ok = await send('GET /llms.txt HTTP/1.1\r\nHost: x\r\n\r\n');
    t.equal(ok?.status, 200, 'the server serves on');
  });
});
