import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard for webhook URLs (contract §6). A URL is checked twice:
 * - at webhooks-create/update: scheme, then every address its host is or resolves to;
 * - at every attempt, inside the HTTP client's `lookup`, against the addresses the socket is
 *   about to connect to — so a DNS answer that changes between the check and the connection
 *   (DNS rebinding) cannot reach a forbidden address. IP-literal hosts skip DNS and are
 *   checked before the request is made.
 *
 * Only global unicast addresses are allowed. Refused: loopback, private (RFC 1918),
 * link-local, unique-local, CGNAT, unspecified, broadcast, multicast, reserved, the cloud
 * metadata addresses, and IPv6 forms that embed IPv4 (mapped, NAT64, 6to4, Teredo).
 * With CRM_ALLOW_INSECURE_WEBHOOKS, loopback is allowed too, and `http` only to loopback.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** The resolver used by both checks; tests swap it to map names to chosen addresses. */
export const dnsResolver: { resolve: Resolver } = { resolve: systemResolver };

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16']);

export interface AddressPolicy {
  /** Loopback addresses are acceptable (insecure local mode). */
  allowLoopback: boolean;
  /** Only loopback addresses are acceptable (an `http` URL in insecure local mode). */
  loopbackOnly: boolean;
}

/** The range of an address: ipaddr.js's range names (IPv4-mapped IPv6 as its IPv4), or `metadata`. */
export function addressRange(ip: string): string {
  if (!ipaddr.isValid(ip)) return 'invalid';
  const addr = ipaddr.process(ip); // ::ffff:a.b.c.d becomes a.b.c.d
  if (METADATA.has(addr.toNormalizedString()) || METADATA.has(addr.toString())) return 'metadata';
  return addr.range();
}

/** Undefined when the address may be connected to, else why not. */
export function addressRefusal(ip: string, policy: AddressPolicy): string | undefined {
  const range = addressRange(ip);
  if (range === 'loopback' && policy.allowLoopback) return undefined;
  if (policy.loopbackOnly) return `address ${ip} is not loopback (http is allowed only to loopback hosts)`;
  if (range === 'unicast') return undefined;
  return `address ${ip} is not allowed (${range})`;
}

export class BlockedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

const bare = (hostname: string) => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

function isLoopbackHost(hostname: string): boolean {
  const host = bare(hostname).toLowerCase();
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

/** Every address the URL's host is or resolves to must pass; undefined when they all do. */
export async function urlAddressRefusal(url: URL, allowInsecure: boolean): Promise<string | undefined> {
  const policy = policyFor(url, allowInsecure);
  const host = bare(url.hostname);
  if (isIP(host)) return addressRefusal(host, policy);
  let addresses: ResolvedAddress[];
  try {
    addresses = await dnsResolver.resolve(host);
  } catch {
    return `host ${host} does not resolve`;
  }
  if (addresses.length === 0) return `host ${host} does not resolve`;
  for (const a of addresses) {
    const refusal = addressRefusal(a.address, policy);
    if (refusal) return `host ${host} resolves to a forbidden address: ${refusal}`;
  }
  return undefined;
}

/**
 * A `lookup` for http(s).request: resolves with the injectable resolver and refuses the
 * connection when any address fails the policy, so the address checked is the address used.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsResolver.resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`host ${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        for (const a of wanted) {
          const refusal = addressRefusal(a.address, policy);
          if (refusal) {
            callback(new BlockedAddressError(`host ${hostname} resolves to a forbidden address: ${refusal}`), '', 0);
            return;
          }
        }
        if (options.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}
