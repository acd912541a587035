import t from 'tap';
import { checkRequestHead, MAX_HEADER_BYTES, MAX_TARGET_BYTES, type RequestHead } from './http-edge.ts';

const head = (over: Partial<RequestHead> = {}): RequestHead => ({
  targetBytes: 20,
  headerBytes: 40,
  headers: { host: 'x' },
  hostRepeated: false,
  ...over,
});
const code = (over: Partial<RequestHead>) => checkRequestHead(head(over))?.code ?? null;

t.test('what passes and what the socket layer refuses', async (t) => {
  t.equal(code({}), null);
  t.equal(code({ targetBytes: MAX_TARGET_BYTES }), null, 'at the limit');
  t.equal(code({ targetBytes: MAX_TARGET_BYTES + 1 }), 'uri_too_long');
  t.equal(code({ headerBytes: MAX_HEADER_BYTES + 1 }), 'headers_too_large');
  t.equal(code({ hostRepeated: true }), 'malformed_request');
  t.equal(code({ headers: { host: 'x', 'content-length': '12' } }), null);
  for (const bad of ['1, 2', '5, 5', '-1', 'abc', '', '1e3', '9'.repeat(16)]) {
    t.equal(
      code({ headers: { host: 'x', 'content-length': bad } }),
      'malformed_request',
      `Content-Length ${JSON.stringify(bad)}`,
    );
  }
  t.equal(code({ headers: { host: 'x', 'transfer-encoding': 'chunked' } }), null);
  t.equal(code({ headers: { host: 'x', 'transfer-encoding': 'Chunked ' } }), null, 'case and spaces');
  t.equal(code({ headers: { host: 'x', 'transfer-encoding': 'gzip, chunked' } }), 'not_implemented');
  t.equal(
    code({ headers: { host: 'x', 'transfer-encoding': 'chunked', 'content-length': '3' } }),
    'malformed_request',
    'both framings',
  );
  t.equal(checkRequestHead(head({ targetBytes: MAX_TARGET_BYTES + 1 }))?.status, 414);
  t.equal(checkRequestHead(head({ headerBytes: MAX_HEADER_BYTES + 1 }))?.status, 431);
});
