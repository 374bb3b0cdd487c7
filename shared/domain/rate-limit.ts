/**
 * Per-account rate limits (contract §14): a token bucket of `CRM_RATE_LIMIT` (`rate,burst` in
 * requests per second; default `100,200`; `0` off), shared by all of an account's keys and all
 * Lambda instances through one item per account (shared/db/rate-limit.ts).
 *
 * The bucket is kept as GCRA (the generic cell rate algorithm, the token bucket written as one
 * timestamp): with `T = 1/rate` and `tat` the "theoretical arrival time", a request at `now` is
 * allowed when `max(tat, now) + T − now ≤ burst·T`, and then `tat = max(tat, now) + T`.
 * Tokens left = `burst − (tat − now)/T`. The arithmetic below is pure (unit-tested with
 * fast-check); times are integer microseconds so no rounding drifts.
 *
 * Leases (docs/performance.md, "Rate limiting"): an instance (a Lambda container, the local
 * process) takes `k` tokens in one write and serves the next `k − 1` requests of the account from
 * memory, so a busy account costs about 1/k writes per request. `k` follows the account's rate as
 * this instance sees it (`leaseSize`): 1 for an idle account (its headers are then the account's
 * exact figures), up to `maxLease(p)` under load. Tokens leased and not used within
 * `LEASE_LIFETIME_US` are dropped (they refill at the account's rate like any spent token).
 */
import { optionalEnv } from '../config/env.js';
import { takeFromBucket } from '../db/rate-limit.js';

export interface RateLimitPolicy {
  /** Requests per second refilled. */
  rate: number;
  /** Bucket size: requests allowed at once after a quiet period. */
  burst: number;
}

export const DEFAULT_RATE_LIMIT = '100,200';

/** Parses `CRM_RATE_LIMIT`: `rate,burst` (positive integers, burst ≥ 1), or `0` (off: undefined). */
export function parseRateLimit(value: string): RateLimitPolicy | undefined {
  const v = value.trim();
  if (v === '0' || v === 'off') return undefined;
  const m = /^(\d{1,7}(?:\.\d+)?)\s*,\s*(\d{1,7})$/.exec(v);
  const rate = m ? Number(m[1]) : NaN;
  const burst = m ? Number(m[2]) : NaN;
  if (!m || !(rate > 0) || rate > 1_000_000 || !Number.isInteger(burst) || burst < 1) {
    throw new Error(`CRM_RATE_LIMIT must be "rate,burst" (requests per second, bucket size; e.g. ${DEFAULT_RATE_LIMIT}) or 0 to turn it off (got ${JSON.stringify(value)})`);
  }
  return { rate, burst };
}

let memo: { raw: string; policy: RateLimitPolicy | undefined } | undefined;
/** The policy in force (read on every call: tests and local mode change the variable). */
export function currentRateLimit(): RateLimitPolicy | undefined {
  const raw = optionalEnv('CRM_RATE_LIMIT') ?? DEFAULT_RATE_LIMIT;
  if (memo?.raw !== raw) memo = { raw, policy: parseRateLimit(raw) };
  return memo.policy;
}

/** Microseconds per request (rounded up: never more than `rate` per second). */
export const intervalOf = (p: RateLimitPolicy) => Math.ceil(1e6 / p.rate);

export interface RateLimitDecision {
  allowed: boolean;
  /** `RateLimit-Limit`: the bucket size. */
  limit: number;
  /** `RateLimit-Remaining`: requests that could be made right now, after this one. */
  remaining: number;
  /** `RateLimit-Reset`: seconds until the bucket is full again. */
  reset: number;
  /** `Retry-After` of a refused request: seconds until one request is allowed again. */
  retryAfter?: number;
}

/** The pure GCRA step: what a request at `now` (µs) gets, given the stored `tat` (µs; undefined: none). */
export function gcra(tat: number | undefined, now: number, p: RateLimitPolicy): { decision: RateLimitDecision; tat: number } {
  const t = intervalOf(p);
  const base = Math.max(tat ?? now, now);
  const next = base + t;
  if (next - now <= p.burst * t) return { decision: allowedAt(next, now, p), tat: next };
  return { decision: refusedAt(base, now, p), tat: base };
}

/** The headers' figures after a request was let through and the bucket's `tat` became `tat`. */
export function allowedAt(tat: number, now: number, p: RateLimitPolicy): RateLimitDecision {
  const t = intervalOf(p);
  const used = Math.max(0, tat - now);
  return { allowed: true, limit: p.burst, remaining: Math.max(0, Math.floor((p.burst * t - used) / t)), reset: Math.ceil(used / 1e6) };
}

/**
 * The figures of a refused request, the bucket's `tat` being `tat`: `Retry-After` is when `want`
 * tokens are there (1 unless this instance waits for a lease of `want`, at most a second of refill).
 */
export function refusedAt(tat: number, now: number, p: RateLimitPolicy, want = 1): RateLimitDecision {
  const t = intervalOf(p);
  const wait = tat - now - (p.burst - want) * t;
  return { allowed: false, limit: p.burst, remaining: 0, reset: Math.ceil(Math.max(0, tat - now) / 1e6), retryAfter: Math.max(1, Math.ceil(wait / 1e6)) };
}

export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.reset),
    ...(d.retryAfter !== undefined ? { 'Retry-After': String(d.retryAfter) } : {}),
  };
}

/** Tokens the bucket holds at `now` given its `tat` (0 … burst). */
export function tokensAt(tat: number | undefined, now: number, p: RateLimitPolicy): number {
  const t = intervalOf(p);
  return Math.max(0, Math.floor((p.burst * t - Math.max(0, (tat ?? now) - now)) / t));
}

/**
 * The pure lease step, the arithmetic the conditional write of shared/db/rate-limit.ts performs:
 * takes `min(want, tokens left)` tokens at `now`; 0 taken when the bucket is empty (`tat` unchanged).
 */
export function takeTokens(tat: number | undefined, now: number, p: RateLimitPolicy, want: number): { taken: number; tat: number } {
  const base = Math.max(tat ?? now, now);
  const taken = Math.min(want, tokensAt(tat, now, p));
  return { taken, tat: base + taken * intervalOf(p) };
}

/** Unused leased tokens are dropped this long after they were taken (µs). */
export const LEASE_LIFETIME_US = 2_000_000;
/** Time constant of the per-instance rate estimate (µs): the decayed count ≈ requests in the last second. */
const RATE_WINDOW_US = 1_000_000;

/**
 * The largest lease: a tenth of the bucket (so N warm instances hold at most N·(k − 1) tokens the
 * account cannot use elsewhere) and at most one second of refill (so waiting for a whole lease at
 * the limit never moves `Retry-After` by more than its rounding).
 */
export const maxLease = (p: RateLimitPolicy) => Math.max(1, Math.min(Math.floor(p.burst / 10), Math.floor(p.rate)));

/**
 * Tokens to take in one write, from `seen`: the account's requests on this instance in about the
 * last second (a decayed count that includes the current one). About 1.2 s of the account's
 * traffic (so 10 requests/s take leases of 12: under 0.1 writes per request), and 1 for an idle
 * account (`seen` < 1.67: no other request in the last second or so).
 */
export const leaseSize = (seen: number, p: RateLimitPolicy) => Math.max(1, Math.min(maxLease(p), Math.floor(seen * 1.2)));

/** One account as this instance sees it. */
export interface AccountLease {
  /** The bucket's `tat` after this instance's last write (or as a failed write returned it). */
  tat?: number;
  /** Tokens this instance holds, already taken from the bucket. */
  tokens: number;
  /** When the held tokens are dropped (µs). */
  expires: number;
  /** Decayed request count (≈ requests of the last second) and when it was last updated (µs). */
  seen: number;
  seenAt: number;
  /** A write in flight: requests arriving meanwhile wait for it instead of writing too. */
  pending?: Promise<void>;
}

/** The write that takes tokens: `busyFirst` is the guess that the bucket is not full (`tat > now`). */
export type TakeTokens = (accountId: string, now: number, t: number, burst: number, want: number, busyFirst: boolean) => Promise<{ taken: number; tat: number }>;

/**
 * An instance's limiter: its leases per account over a shared bucket reached through `take`
 * (shared/db/rate-limit.ts in the service; the pure `takeTokens` in the unit tests' simulation of
 * many instances). Bounded: forgets every account when it holds too many.
 */
export class LeaseLimiter {
  private readonly accounts = new Map<string, AccountLease>();
  /** Bucket writes made, and requests decided (for the bench and the tests' cost figures). */
  readonly stats = { writes: 0, requests: 0 };

  constructor(private readonly take: TakeTokens, private readonly maxAccounts = 10_000) {}

  private lease(accountId: string, now: number): AccountLease {
    let a = this.accounts.get(accountId);
    if (!a) {
      if (this.accounts.size >= this.maxAccounts) this.accounts.clear();
      a = { tokens: 0, expires: 0, seen: 0, seenAt: now };
      this.accounts.set(accountId, a);
    }
    if (a.tokens > 0 && now >= a.expires) a.tokens = 0;
    return a;
  }

  /** Tokens this instance would take for the account's next write (counting the request at `now`). */
  private wanted(a: AccountLease, now: number, p: RateLimitPolicy): number {
    return leaseSize(a.seen * Math.exp(-Math.max(0, now - a.seenAt) / RATE_WINDOW_US) + 1, p);
  }

  /**
   * Whether this instance refuses the account's request at `now` without a write: it holds no
   * token and the bucket, as it last saw it (`tat` never decreases, so this view is never too
   * pessimistic for one token), cannot give the lease it would ask for. Cheap and synchronous.
   */
  refusesFromMemory(accountId: string, now: number, p: RateLimitPolicy): boolean {
    const a = this.accounts.get(accountId);
    if (!a || (a.tokens > 0 && now < a.expires) || a.tat === undefined) return false;
    return tokensAt(a.tat, now, p) < this.wanted(a, now, p);
  }

  /** Decides one request of the account at `now` (µs). */
  async decide(accountId: string, now: number, p: RateLimitPolicy): Promise<RateLimitDecision> {
    const a = this.lease(accountId, now);
    this.stats.requests++;
    const want = this.wanted(a, now, p);
    a.seen = a.seen * Math.exp(-Math.max(0, now - a.seenAt) / RATE_WINDOW_US) + 1;
    a.seenAt = Math.max(a.seenAt, now);
    // Requests that arrive while this instance's write is in flight wait for it (at most twice:
    // then they write themselves), so a burst on one instance makes one write, not one each.
    for (let waited = 0; a.pending && a.tokens === 0 && waited < 2; waited++) await a.pending;
    if (a.tokens > 0 && now < a.expires) return this.serve(a, now, p);
    if (a.tat !== undefined && tokensAt(a.tat, now, p) < want) return refusedAt(a.tat, now, p, want);
    const write = this.take(accountId, now, intervalOf(p), p.burst, want, a.tat !== undefined && a.tat > now).then((out) => {
      this.stats.writes++;
      a.tat = Math.max(a.tat ?? 0, out.tat);
      if (out.taken > 0) {
        a.tokens += out.taken;
        a.expires = now + LEASE_LIFETIME_US;
      }
    });
    a.pending = write;
    try {
      await write;
    } finally {
      if (a.pending === write) a.pending = undefined;
    }
    if (a.tokens > 0) return this.serve(a, now, p);
    return refusedAt(a.tat!, now, p);
  }

  /** A request served from the lease: the figures are this instance's view (held tokens + the bucket as last seen). */
  private serve(a: AccountLease, now: number, p: RateLimitPolicy): RateLimitDecision {
    a.tokens--;
    const d = allowedAt(a.tat!, now, p);
    return { ...d, remaining: Math.min(p.burst - 1, d.remaining + a.tokens) };
  }
}

const limiter = new LeaseLimiter((...args) => takeFromBucket(...args));

/** This process's limiter's figures: bucket writes and requests decided since it started. */
export const rateLimitStats = (): Readonly<{ writes: number; requests: number }> => ({ ...limiter.stats });

/**
 * Whether this instance already knows the account is over its limit (then a read does not run at
 * all). Cheap and synchronous: no DynamoDB call.
 */
export function knownOverLimit(accountId: string, nowMs = Date.now()): boolean {
  const p = currentRateLimit();
  return p !== undefined && limiter.refusesFromMemory(accountId, Math.round(nowMs * 1000), p);
}

/** Counts one request of the account; undefined when rate limiting is off. */
export async function consumeRateLimit(accountId: string, nowMs = Date.now()): Promise<RateLimitDecision | undefined> {
  const p = currentRateLimit();
  if (!p) return undefined;
  return limiter.decide(accountId, Math.round(nowMs * 1000), p);
}
