// Webhook target policy. A webhook is a request the service makes on a client's behalf, so a
// URL naming an internal address would let any API key probe the operator's network (SSRF).
// Every address a name resolves to is checked, at registration and again at each attempt
// (the DNS answer may change in between), and the connection goes to the address checked.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
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

const METADATA_V6 = new Set(['fd00:ec2:0:0:0:0:0:254']);

function v4ToInt(address: string): number {
  const parts = address.split('.').map(Number);
  return (((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!) >>> 0;
}

function inV4(ip: number, base: string, bits: number): boolean {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (ip & mask) >>> 0 === (v4ToInt(base) & mask) >>> 0;
}

export function classifyV4(address: string): AddressClass {
  const ip = v4ToInt(address);
  if (address === '169.254.169.254' || address === '100.100.100.200') return 'metadata';
  if (ip === 0xffffffff) return 'broadcast';
  if (inV4(ip, '0.0.0.0', 8)) return 'unspecified';
  if (inV4(ip, '10.0.0.0', 8) || inV4(ip, '172.16.0.0', 12) || inV4(ip, '192.168.0.0', 16)) return 'private';
  if (inV4(ip, '127.0.0.0', 8)) return 'loopback';
  if (inV4(ip, '169.254.0.0', 16)) return 'link_local';
  if (inV4(ip, '100.64.0.0', 10)) return 'cgnat';
  if (inV4(ip, '224.0.0.0', 4)) return 'multicast';
  // IETF protocol assignments, documentation, benchmarking and the old class E block
  if (
    inV4(ip, '192.0.0.0', 24) ||
    inV4(ip, '192.0.2.0', 24) ||
    inV4(ip, '198.51.100.0', 24) ||
    inV4(ip, '203.0.113.0', 24) ||
    inV4(ip, '198.18.0.0', 15) ||
    inV4(ip, '240.0.0.0', 4)
  )
    return 'reserved';
  return 'public';
}

/** Eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail is folded in). */
export function expandV6(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const ip = v4ToInt(v4Tail[1]!);
    text = text.slice(0, -v4Tail[1]!.length) + `${(ip >>> 16).toString(16)}:${(ip & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

function embeddedV4(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

export function classifyV6(address: string): AddressClass {
  const g = expandV6(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g7 === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and the NAT64 well-known prefix reach the embedded IPv4 address
  if (zeroUpTo(5) && g5 === 0xffff) return classifyV4(embeddedV4(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyV4(embeddedV4(g6, g7));
  // 6to4 carries an IPv4 address in bits 16-47
  if (g0 === 0x2002) return classifyV4(embeddedV4(g1, g2));
  if (zeroUpTo(6)) return 'reserved'; // deprecated IPv4-compatible ::a.b.c.d
  if (METADATA_V6.has(g.map((x) => x.toString(16)).join(':'))) return 'metadata';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique_local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link_local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if ((g0 === 0x2001 && g1 === 0x0db8) || (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0)) return 'reserved';
  return 'public';
}

export function classifyAddress(address: string): AddressClass {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return classifyV4(address);
  if (family === 6) return classifyV6(address);
  throw new Error(`not an IP address: ${address}`);
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
