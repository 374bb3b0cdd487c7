/** The rate limiter's arithmetic (contract §14): GCRA steps, the headers' figures, CRM_RATE_LIMIT. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gcra, intervalOf, parseRateLimit, rateLimitHeaders, type RateLimitPolicy } from '../../shared/domain/rate-limit.js';

const policyArb = fc.record({ rate: fc.integer({ min: 1, max: 500 }), burst: fc.integer({ min: 1, max: 50 }) });
/** Gaps between requests in µs: often 0 (a burst), sometimes up to a few seconds. */
const gapsArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 3_000_000 })), { minLength: 1, maxLength: 300 });
const START = 1_800_000_000_000_000;

/** Runs a sequence of requests through the bucket; returns each request's time and decision. */
function simulate(p: RateLimitPolicy, gaps: number[]) {
  let tat: number | undefined;
  let now = START;
  return gaps.map((gap) => {
    now += gap;
    const step = gcra(tat, now, p);
    tat = step.tat;
    return { now, tat, decision: step.decision };
  });
}

describe('CRM_RATE_LIMIT', () => {
  it('parses rate,burst and 0 (off); anything else is refused with a message naming the format', () => {
    expect(parseRateLimit('100,200')).toEqual({ rate: 100, burst: 200 });
    expect(parseRateLimit(' 5 , 1 ')).toEqual({ rate: 5, burst: 1 });
    expect(parseRateLimit('0.5,3')).toEqual({ rate: 0.5, burst: 3 });
    expect(parseRateLimit('0')).toBeUndefined();
    for (const bad of ['', '100', '100,0', '0,5', '-1,5', 'a,b', '100,200,300', '100,2.5']) expect(() => parseRateLimit(bad), bad).toThrow(/rate,burst/);
  });
});

describe('the bucket (GCRA) and its headers', () => {
  it('lets exactly `burst` requests through at one instant, then refuses with Retry-After ≥ 1', () => {
    const p = { rate: 10, burst: 20 };
    const out = simulate(p, Array(25).fill(0));
    expect(out.filter((r) => r.decision.allowed)).toHaveLength(20);
    expect(out.slice(0, 20).map((r) => r.decision.remaining)).toEqual([...Array(20).keys()].map((i) => 19 - i));
    const refused = out[20]!.decision;
    expect(refused).toMatchObject({ allowed: false, limit: 20, remaining: 0, retryAfter: 1 });
    expect(rateLimitHeaders(refused)).toEqual({ 'RateLimit-Limit': '20', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '2', 'Retry-After': '1' });
    expect(rateLimitHeaders(out[0]!.decision)).toEqual({ 'RateLimit-Limit': '20', 'RateLimit-Remaining': '19', 'RateLimit-Reset': '1' });
  });

  it('never lets more than burst + rate·window requests through in any window', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, (p, gaps) => {
        const allowedTimes = simulate(p, gaps).filter((r) => r.decision.allowed).map((r) => r.now);
        const t = intervalOf(p);
        for (let i = 0; i < allowedTimes.length; i++) {
          for (let j = i; j < allowedTimes.length; j++) {
            const window = allowedTimes[j]! - allowedTimes[i]!;
            expect(j - i + 1).toBeLessThanOrEqual(p.burst + Math.floor(window / t));
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('RateLimit-Remaining is exactly how many more requests would pass at the same instant', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, (p, gaps) => {
        const last = simulate(p, gaps).at(-1)!;
        let tat = last.tat;
        let more = 0;
        for (let i = 0; i <= p.burst; i++) {
          const step = gcra(tat, last.now, p);
          if (!step.decision.allowed) break;
          tat = step.tat;
          more++;
        }
        expect(last.decision.remaining).toBe(more);
        expect(last.decision.remaining).toBeLessThanOrEqual(last.decision.limit - (last.decision.allowed ? 1 : 0));
      }),
      { numRuns: 300 },
    );
  });

  it('Retry-After is the first whole second at which a request passes; RateLimit-Reset is when the bucket is full', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, fc.integer({ min: 0, max: 1_000 }), (p, gaps, extra) => {
        const out = simulate(p, [...gaps, ...Array(p.burst + 1 + (extra % 5)).fill(0)]);
        const last = out.at(-1)!;
        const d = last.decision;
        expect(d.allowed).toBe(false);
        expect(d.retryAfter).toBeGreaterThanOrEqual(1);
        expect(gcra(last.tat, last.now + d.retryAfter! * 1e6, p).decision.allowed).toBe(true);
        if (d.retryAfter! > 1) expect(gcra(last.tat, last.now + (d.retryAfter! - 1) * 1e6, p).decision.allowed).toBe(false);
        // After RateLimit-Reset seconds of quiet the whole burst is available again.
        expect(gcra(last.tat, last.now + d.reset * 1e6, p).decision.remaining).toBe(p.burst - 1);
        for (const r of out.filter((x) => x.decision.allowed)) expect(gcra(r.tat, r.now + r.decision.reset * 1e6, p).decision.remaining).toBe(p.burst - 1);
      }),
      { numRuns: 200 },
    );
  });

  it('refills at the rate: after a drained bucket, one request per interval passes', () => {
    const p = { rate: 4, burst: 2 };
    const t = intervalOf(p);
    const out = simulate(p, [0, 0, 0, t, 0, t, t]);
    expect(out.map((r) => r.decision.allowed)).toEqual([true, true, false, true, false, true, true]);
  });
});
