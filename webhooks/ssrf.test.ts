import t, { type Test } from 'tap';
import { ApiError } from '../core/errors.ts';
import {
  checkTarget,
  classifyAddress,
  expandV6,
  parseTargetUrl,
  policyFromConfig,
  systemResolver,
  type Resolver,
  type TargetPolicy,
} from './ssrf.ts';

const strict: TargetPolicy = { allow: new Set() };
const loopbackOnly: TargetPolicy = { allow: new Set(['loopback']) };
const fakeDns =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };

t.test('addresses are classified', async (t) => {
  const cases: [string, string][] = [
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['2606:4700::1111', 'public'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.1', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['169.254.1.1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.5', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'reserved'],
  ];
  for (const [address, kind] of cases) t.equal(classifyAddress(address), kind, address);
  t.same(expandV6('1::2'), [1, 0, 0, 0, 0, 0, 0, 2]);
  t.throws(() => classifyAddress('example.com'), /not an IP/);
});

async function refused(t: Test, url: string, policy: TargetPolicy, pattern: RegExp, resolve?: Resolver) {
  const err = await checkTarget(url, policy, resolve ?? fakeDns({})).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof ApiError, `${url} refused with an ApiError`);
  t.equal((err as ApiError).code, 'unsafe_target', `${url}: unsafe_target`);
  t.equal((err as ApiError).status, 400, `${url}: 400`);
  t.match((err as ApiError).detail, pattern, `${url}: ${(err as ApiError).detail}`);
}

t.test('unsafe targets are refused with a clear message', async (t) => {
  await refused(t, 'http://127.0.0.1:8080/hook', strict, /127\.0\.0\.1 is a loopback address/);
  await refused(t, 'https://10.1.2.3/hook', strict, /10\.1\.2\.3 is a private network address/);
  await refused(t, 'http://169.254.169.254/latest/meta-data/', strict, /cloud metadata address/);
  await refused(t, 'http://[::1]:9000/', strict, /::1 is a loopback address/);
  await refused(t, 'http://[::ffff:127.0.0.1]/', strict, /loopback/);
  await refused(t, 'http://0x7f.1/', strict, /127\.0\.0\.1 is a loopback/);
  await refused(t, 'http://[fe80::1]/', strict, /link-local/);
  await refused(t, 'http://100.64.1.1/', strict, /carrier-grade NAT/);
  await refused(t, 'http://0.0.0.0/', strict, /unspecified/);
  // a real name: localhost resolves to loopback through the system resolver
  await refused(t, 'http://localhost:3000/', strict, /localhost resolves to (127\.0\.0\.1|::1)/, systemResolver);
  // every address counts: one private answer among public ones is enough to refuse
  await refused(
    t,
    'https://mixed.example/',
    strict,
    /mixed\.example resolves to 192\.168\.0\.7/,
    fakeDns({ 'mixed.example': ['93.184.216.34', '192.168.0.7'] }),
  );
  await refused(t, 'https://nowhere.example/', strict, /could not be resolved \(ENOTFOUND\)/);
  await refused(t, 'ftp://example.com/', strict, /scheme ftp: is not allowed/);
  await refused(t, 'file:///etc/passwd', strict, /scheme file: is not allowed/);
  await refused(t, 'https://user:pw@example.com/', strict, /credentials/);
  await refused(t, 'not a url', strict, /not a valid absolute URL/);
  await refused(t, `https://example.com/${'a'.repeat(2100)}`, strict, /longer than 2048/);
});

t.test('the system resolver is used when none is given', async (t) => {
  const err = await checkTarget('http://localhost:1/', strict).then(
    () => null,
    (e: unknown) => e,
  );
  t.match((err as ApiError).detail, /localhost resolves to/);
});

t.test('public targets pass and the checked address is the one to connect to', async (t) => {
  const dns = fakeDns({ 'hooks.example': ['93.184.216.34', '2606:2800:220:1::1'] });
  const checked = await checkTarget('https://hooks.example/in?x=1', strict, dns);
  t.equal(checked.address, '93.184.216.34');
  t.equal(checked.family, 4);
  t.equal(checked.url.pathname, '/in');
  const v6 = await checkTarget('http://[2606:2800:220:1::1]:8443/', strict, dns);
  t.equal(v6.address, '2606:2800:220:1::1');
  t.equal(v6.family, 6);
});

t.test('an allowed class passes; the rest stay refused', async (t) => {
  t.equal((await checkTarget('http://127.0.0.1:9/', loopbackOnly)).address, '127.0.0.1');
  t.equal((await checkTarget('http://localhost:9/', loopbackOnly)).url.hostname, 'localhost');
  await refused(t, 'http://10.0.0.1/', loopbackOnly, /private network/);
  const operator = policyFromConfig({ allow_private_targets: true });
  t.ok(await checkTarget('http://10.0.0.1/', operator));
  t.ok(await checkTarget('http://[fd00::5]/', operator));
  await refused(t, 'http://169.254.169.254/', operator, /metadata/);
  await refused(t, 'http://224.0.0.1/', operator, /multicast/);
  t.same([...policyFromConfig({ allow_private_targets: false }).allow], []);
});

t.test('parseTargetUrl needs no DNS', async (t) => {
  t.equal(parseTargetUrl('https://example.com/x').hostname, 'example.com');
  t.throws(() => parseTargetUrl('mailto:a@b.c'), ApiError);
});
