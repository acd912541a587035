import t from 'tap';
import { htmlPageHeaders } from './headers.ts';
import { listenAddress } from './listen.ts';

t.test('the banner names the address bound and who reaches it', async (t) => {
  t.same(listenAddress('127.0.0.1', 8080), {
    bound: 'http://127.0.0.1:8080',
    local: 'http://127.0.0.1:8080',
    reach: 'this machine only',
  });
  t.same(listenAddress('0.0.0.0', 8080), {
    bound: 'http://0.0.0.0:8080',
    local: 'http://127.0.0.1:8080',
    reach: 'every interface',
  });
  t.same(listenAddress('::', 80), { bound: 'http://[::]:80', local: 'http://[::1]:80', reach: 'every interface' });
  t.same(listenAddress('::1', 80), { bound: 'http://[::1]:80', local: 'http://[::1]:80', reach: 'this machine only' });
  t.same(listenAddress('10.1.2.3', 80), { bound: 'http://10.1.2.3:80', local: 'http://10.1.2.3:80', reach: null });
});

t.test('a page that could be framed is refused when its headers are built', async (t) => {
  const headers = new Map(htmlPageHeaders("default-src 'none'; frame-ancestors 'none'"));
  t.equal(headers.get('Referrer-Policy'), 'no-referrer');
  t.equal(headers.get('X-Frame-Options'), 'DENY');
  t.throws(() => htmlPageHeaders("default-src 'none'"), /must deny framing/);
  t.throws(() => htmlPageHeaders("default-src 'none'; frame-ancestors 'self'"), /must deny framing/);
});
