import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressPolicy, addressRefusal, bareHost, policyFor } from '../net/ssrf.js';

/**
 * The DNS-resolving half of the SSRF guard (the pure classification is shared/net/ssrf.ts).
 * A URL is checked twice:
 * - at webhooks-create/update: every address its host is or resolves to;
 * - at every attempt, inside the HTTP client's `lookup`, against the addresses the socket is
 *   about to connect to — so a DNS answer that changes between the check and the connection
 *   (DNS rebinding) cannot reach a forbidden address. IP-literal hosts skip DNS and are
 *   checked before the request is made.
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

export class BlockedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

/** Every address the URL's host is or resolves to must pass; undefined when they all do. */
export async function urlAddressRefusal(url: URL, allowInsecure: boolean): Promise<string | undefined> {
  const policy = policyFor(url, allowInsecure);
  const host = bareHost(url.hostname);
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
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}
