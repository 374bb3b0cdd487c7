import { BlockList, isIP } from 'node:net';

/**
 * Pure classification of webhook URLs and IP addresses (no DNS, no environment): which
 * special-purpose range an address belongs to, and whether a policy lets a webhook connect to
 * it. Used by the request schemas (URL syntax and scheme) and by the DNS-resolving guard in
 * shared/webhooks/ssrf.ts (every address a host is or resolves to, at registration and at
 * every attempt).
 *
 * The tables follow IANA's IPv4 and IPv6 Special-Purpose Address Registries (plus multicast,
 * the reserved blocks and the cloud metadata addresses). Only ordinary global unicast is
 * allowed: every listed range is refused, globally reachable anycast blocks included (nobody
 * receives webhooks there). IPv6 forms that embed an IPv4 address are refused outright
 * (IPv4-compatible `::/96`, NAT64, 6to4, Teredo, SIIT), except IPv4-mapped `::ffff:0:0/96`,
 * which the socket layer treats as the IPv4 address itself: it is judged as that address.
 * IPv6 outside 2000::/3 (global unicast) is `reserved` unless a row names it.
 */

/** Cloud metadata and platform endpoints (AWS IMDS v4/v6, Alibaba, Azure wire server). */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16']);

/** First matching row wins, so narrower blocks come before the blocks that contain them. */
export const IPV4_SPECIAL: ReadonlyArray<readonly [cidr: string, range: string]> = [
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'thisNetwork'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrierGradeNat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'linkLocal'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/29', 'dsLite'],
  ['192.0.0.0/24', 'ietfProtocol'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'as112'],
  ['192.52.193.0/24', 'amt'],
  ['192.88.99.0/24', '6to4Relay'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'as112'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

export const IPV6_SPECIAL: ReadonlyArray<readonly [cidr: string, range: string]> = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'ipv4Mapped'], // judged as the embedded IPv4 address (see addressRange)
  ['::/96', 'ipv4Compatible'],
  ['::ffff:0:0:0/96', 'ipv4Translated'],
  ['64:ff9b::/96', 'nat64'],
  ['64:ff9b:1::/48', 'nat64'],
  ['100::/64', 'discardOnly'],
  ['100:0:0:1::/64', 'dummyPrefix'],
  ['2001::/32', 'teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:3::/32', 'amt'],
  ['2001:4:112::/48', 'as112'],
  ['2001:10::/28', 'orchid'],
  ['2001:20::/28', 'orchid'],
  ['2001:30::/28', 'droneRemoteId'],
  ['2001::/23', 'ietfProtocol'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'as112'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'srv6'],
  ['fc00::/7', 'uniqueLocal'],
  ['fe80::/10', 'linkLocal'],
  ['fec0::/10', 'siteLocal'],
  ['ff00::/8', 'multicast'],
];

/** One BlockList per row (Node's own CIDR matcher): the first row whose list holds the address names its range. */
const compile = (rows: ReadonlyArray<readonly [string, string]>, family: 'ipv4' | 'ipv6') =>
  rows.map(([cidr, range]) => {
    const [prefix, bits] = cidr.split('/') as [string, string];
    const list = new BlockList();
    list.addSubnet(prefix, Number(bits), family);
    return [list, range] as const;
  });
const V4 = compile(IPV4_SPECIAL, 'ipv4');
const V6 = compile(IPV6_SPECIAL, 'ipv6');
const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');
const METADATA_LIST = new BlockList();
for (const ip of METADATA) METADATA_LIST.addAddress(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');

/**
 * IPv6 text in the WHATWG URL parser's canonical form, which keeps `::a00:1` (IPv4-compatible)
 * apart from `::ffff:a00:1` (IPv4-mapped) and writes a dotted tail in hex. A zone id (`%eth0`)
 * is dropped.
 */
const canonicalV6 = (ip: string): string => bareHost(new URL(`http://[${ip.split('%')[0]!}]/`).hostname);

/** `::ffff:a00:1` → `10.0.0.1`: the IPv4 address an IPv4-mapped IPv6 address (canonical form) stands for. */
function mappedIPv4(canonical: string): string | undefined {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!m) return undefined;
  const [hi, lo] = [parseInt(m[1]!, 16), parseInt(m[2]!, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/**
 * The range of an address: a row name of the tables above, `metadata`, `unicast` (ordinary
 * global unicast: allowed) or `invalid`. IPv4-mapped IPv6 is the range of its IPv4.
 */
export function addressRange(ip: string): string {
  const version = isIP(ip);
  if (version === 0) return 'invalid';
  if (version === 4) return rangeOf(ip, 'ipv4', V4);
  const v6 = canonicalV6(ip);
  const mapped = mappedIPv4(v6);
  if (mapped !== undefined) return rangeOf(mapped, 'ipv4', V4);
  const range = rangeOf(v6, 'ipv6', V6);
  return range === 'unicast' && !GLOBAL_UNICAST_V6.check(v6, 'ipv6') ? 'reserved' : range;
}

/** `metadata`, the first matching row's range, or `unicast`. */
function rangeOf(addr: string, family: 'ipv4' | 'ipv6', table: typeof V4): string {
  if (METADATA_LIST.check(addr, family)) return 'metadata';
  return table.find(([list]) => list.check(addr, family))?.[1] ?? 'unicast';
}

export interface AddressPolicy {
  /** Loopback addresses are acceptable (insecure local mode). */
  allowLoopback: boolean;
  /** Only loopback addresses are acceptable (an `http` URL in insecure local mode). */
  loopbackOnly: boolean;
}

/** Undefined when the address may be connected to, else why not. */
export function addressRefusal(ip: string, policy: AddressPolicy): string | undefined {
  const range = addressRange(ip);
  if (range === 'loopback' && policy.allowLoopback) return undefined;
  if (policy.loopbackOnly) return `address ${ip} is not loopback (http is allowed only to loopback hosts)`;
  if (range === 'unicast') return undefined;
  return `address ${ip} is not allowed (${range})`;
}

/** `[::1]` → `::1`. */
export const bareHost = (hostname: string) => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

/** `localhost`, 127.0.0.0/8 or `::1` (written as an IP literal or the name). */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname).toLowerCase();
  if (host === 'localhost') return true;
  return isIP(host) !== 0 && addressRange(host) === 'loopback';
}

/**
 * Syntax and scheme (the `webhooks.invalid_url` check that needs no DNS): an absolute `https`
 * URL of at most 2,048 characters with a host; in insecure mode also `http` to a loopback host.
 */
export function parseWebhookUrl(raw: string, allowInsecure: boolean): URL | undefined {
  if (raw.length > 2048 || !URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.hostname === '') return undefined;
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && allowInsecure && isLoopbackHost(url.hostname)) return url;
  return undefined;
}

export function policyFor(url: URL, allowInsecure: boolean): AddressPolicy {
  return { allowLoopback: allowInsecure, loopbackOnly: url.protocol === 'http:' };
}
