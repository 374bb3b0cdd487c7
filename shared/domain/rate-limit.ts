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

/** The figures of a refused request, the bucket's `tat` being `tat` (> now + (burst − 1)·T). */
export function refusedAt(tat: number, now: number, p: RateLimitPolicy): RateLimitDecision {
  const t = intervalOf(p);
  const wait = tat - now - (p.burst - 1) * t;
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

/**
 * The last `tat` this instance saw per account: it picks the update that will most likely
 * succeed, and refuses at once, without a write, a request of an account known to be over its
 * limit (`tat` never decreases, so that knowledge cannot be wrong). Bounded: cleared when large.
 */
const lastSeen = new Map<string, number>();
const MAX_REMEMBERED = 10_000;

/**
 * Whether this instance already knows the account is over its limit (then a read does not run at
 * all). Cheap and synchronous: no DynamoDB call.
 */
export function knownOverLimit(accountId: string, nowMs = Date.now()): boolean {
  const p = currentRateLimit();
  const known = p && lastSeen.get(accountId);
  return p !== undefined && known !== undefined && known - Math.round(nowMs * 1000) > (p.burst - 1) * intervalOf(p);
}

/** Takes one request from the account's bucket; undefined when rate limiting is off. */
export async function consumeRateLimit(accountId: string, nowMs = Date.now()): Promise<RateLimitDecision | undefined> {
  const p = currentRateLimit();
  if (!p) return undefined;
  const now = Math.round(nowMs * 1000);
  const t = intervalOf(p);
  const known = lastSeen.get(accountId);
  if (known !== undefined && known - now > (p.burst - 1) * t) return refusedAt(known, now, p);
  const out = await takeFromBucket(accountId, now, t, p.burst, known !== undefined && known > now);
  if (lastSeen.size >= MAX_REMEMBERED) lastSeen.clear();
  lastSeen.set(accountId, out.tat);
  return out.taken ? allowedAt(out.tat, now, p) : refusedAt(out.tat, now, p);
}
