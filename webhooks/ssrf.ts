// Webhook target policy. A webhook is a request the service makes on a client's behalf, so a
// URL naming an internal address would let any API key probe the operator's network (SSRF).
// Every address a name resolves to is checked, at registration and again at each attempt
// (the DNS answer may change in between), and the connection goes to the address checked.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '../core/errors.ts';

export const ADDRESS_CLASSES = [
  'public',
  'private',
  'loopback',
  'link_local',
  'metadata',
  'unique_local',
  'cgnat',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
] as const;
export type AddressClass = (typeof ADDRESS_CLASSES)[number];

/** The classes an operator may allow; metadata, multicast and the like are never valid targets. */
export const PRIVATE_CLASSES: readonly AddressClass[] = ['private', 'loopback', 'link_local', 'unique_local', 'cgnat'];

export interface TargetPolicy {
  /** classes besides `public` that may be targeted */
  allow: ReadonlySet<AddressClass>;
}

export function policyFromConfig(webhooks: { allow_private_targets: boolean }): TargetPolicy {
  return { allow: new Set(webhooks.allow_private_targets ? PRIVATE_CLASSES : []) };
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

type Family = 'ipv4' | 'ipv6';

/**
 * The address blocks of each class, in the order they are tested: the first class whose list
 * holds an address wins, so the metadata host is not read as link-local nor the broadcast
 * address as reserved. net.BlockList matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d)
 * against the IPv4 blocks itself.
 */
const BLOCKS: ReadonlyArray<[AddressClass, ReadonlyArray<[string, number, Family]>]> = [
  [
    'metadata',
    [
      ['169.254.169.254', 32, 'ipv4'],
      ['100.100.100.200', 32, 'ipv4'],
      ['fd00:ec2::254', 128, 'ipv6'],
    ],
  ],
  ['broadcast', [['255.255.255.255', 32, 'ipv4']]],
  [
    'unspecified',
    [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  ],
  [
    'loopback',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fec0::', 10, 'ipv6'], // deprecated site-local
    ],
  ],
  [
    'link_local',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
  ['cgnat', [['100.64.0.0', 10, 'ipv4']]],
  ['unique_local', [['fc00::', 7, 'ipv6']]],
  [
    'multicast',
    [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  ],
  [
    'reserved',
    [
      // IETF protocol assignments, documentation, benchmarking and the old class E block
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
      ['2001:db8::', 32, 'ipv6'],
      ['100::', 64, 'ipv6'],
      ['::', 96, 'ipv6'], // deprecated IPv4-compatible ::a.b.c.d
    ],
  ],
];

const CLASS_LISTS: ReadonlyArray<[AddressClass, BlockList]> = BLOCKS.map(([kind, subnets]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family);
  return [kind, list];
});

/** Prefixes whose addresses carry an IPv4 address that is where the packets really go. */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');
const SIX_TO_FOUR = new BlockList();
SIX_TO_FOUR.addSubnet('2002::', 16, 'ipv6');

/** Eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail is folded in). */
export function expandV6(address: string): number[] {
  let text = address.toLowerCase();
  const v4Tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4Tail) {
    const [a, b, c, d] = v4Tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4Tail[0].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

function embeddedV4(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

function classifyIn(address: string, family: Family): AddressClass {
  for (const [kind, list] of CLASS_LISTS) if (list.check(address, family)) return kind;
  return 'public';
}

export function classifyAddress(raw: string): AddressClass {
  const address = raw.split('%')[0]!;
  const family = isIP(address);
  if (family === 4) return classifyIn(address, 'ipv4');
  if (family !== 6) throw new Error(`not an IP address: ${raw}`);
  // NAT64 and 6to4 reach the IPv4 address they embed: classify that one
  if (NAT64.check(address, 'ipv6')) {
    const g = expandV6(address);
    return classifyIn(embeddedV4(g[6]!, g[7]!), 'ipv4');
  }
  if (SIX_TO_FOUR.check(address, 'ipv6')) {
    const g = expandV6(address);
    return classifyIn(embeddedV4(g[1]!, g[2]!), 'ipv4');
  }
  return classifyIn(address, 'ipv6');
}

const CLASS_WORDS: Record<AddressClass, string> = {
  public: 'a public address',
  private: 'a private network address',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata address',
  unique_local: 'an IPv6 unique-local address',
  cgnat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

export interface CheckedTarget {
  url: URL;
  /** the address to connect to: the one that was checked */
  address: string;
  family: 4 | 6;
}

function refuse(detail: string): never {
  throw new ApiError('unsafe_target', detail);
}

/** Syntax only: scheme, no credentials, length. Needs no DNS, so schemas can call it. */
export function parseTargetUrl(raw: string): URL {
  if (raw.length > 2048) refuse('url: longer than 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse(`url: not a valid absolute URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    refuse(`url: scheme ${url.protocol} is not allowed; use http or https`);
  if (url.username || url.password) refuse('url: credentials in the URL are not allowed');
  if (!url.hostname) refuse('url: has no host');
  return url;
}

/**
 * Parses, resolves and checks a target. Refuses when ANY resolved address is outside the
 * policy: a name answering with one public and one private address could be steered to either.
 */
export async function checkTarget(
  raw: string,
  policy: TargetPolicy,
  resolve: Resolver = systemResolver,
): Promise<CheckedTarget> {
  const url = parseTargetUrl(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      refuse(
        `url: host ${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    if (addresses.length === 0) refuse(`url: host ${host} has no addresses`);
  }
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind !== 'public' && !policy.allow.has(kind)) {
      const via = literal ? '' : ` (${host} resolves to ${address})`;
      refuse(`url: ${literal ? address : host} is ${CLASS_WORDS[kind]}${via}; webhook targets must be public`);
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address.split('%')[0]!, family: first.family };
}
