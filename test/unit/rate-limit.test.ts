/** The rate limiter's arithmetic (contract §14): GCRA steps, the headers' figures, CRM_RATE_LIMIT, leases over many instances. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gcra, intervalOf, LEASE_LIFETIME_US, LeaseLimiter, leaseSize, maxLease, parseRateLimit, type RateLimitDecision, rateLimitHeaders, type RateLimitPolicy, takeTokens } from '../../shared/domain/rate-limit.js';

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

/**
 * Many instances (LeaseLimiter) over one shared bucket per account: the bucket here is the pure
 * `takeTokens`, the arithmetic shared/db/rate-limit.ts performs with its conditional write (that
 * write is exercised against DynamoDB Local in test/integration/rate-limit.test.ts).
 */
function fleet(p: RateLimitPolicy, instances: number) {
  const buckets = new Map<string, number>();
  const limiters = Array.from({ length: instances }, () =>
    new LeaseLimiter(async (account, now, _t, _burst, want) => {
      const out = takeTokens(buckets.get(account), now, p, want);
      buckets.set(account, out.tat);
      return out;
    }),
  );
  return {
    limiters,
    decide: (instance: number, account: string, now: number) => limiters[instance % instances]!.decide(account, now, p),
    writes: () => limiters.reduce((n, l) => n + l.stats.writes, 0),
  };
}

/** Requests as (gap µs, instance): bursts, steady trickles and long pauses. */
const requestsArb = fc.array(
  fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: 3_000_000 })), instance: fc.nat() }),
  { minLength: 1, maxLength: 400 },
);
const leasePolicyArb = fc.record({ rate: fc.integer({ min: 1, max: 400 }), burst: fc.oneof(fc.integer({ min: 10, max: 40 }), fc.integer({ min: 1, max: 300 })) });

describe('leases: an instance takes k tokens per write and serves k requests from memory', () => {
  it('lease size: 1 when idle, growing with the rate the instance sees, at most a tenth of the bucket and a second of refill', () => {
    const p = { rate: 100, burst: 200 };
    expect(maxLease(p)).toBe(20);
    expect([0, 1, 1.6, 1.7, 10, 16, 500].map((seen) => leaseSize(seen, p))).toEqual([1, 1, 1, 2, 12, 19, 20]);
    expect(maxLease({ rate: 5, burst: 200 })).toBe(5);
    expect(maxLease({ rate: 0.1, burst: 4 })).toBe(1);
  });

  it(`across any number of instances, never admits more than burst + rate·window + the lease slack in any window (slack: min(instances·(k_max − 1), rate·${LEASE_LIFETIME_US / 1e6} s))`, async () => {
    await fc.assert(
      fc.asyncProperty(leasePolicyArb, fc.integer({ min: 1, max: 6 }), requestsArb, async (p, instances, requests) => {
        const f = fleet(p, instances);
        const t = intervalOf(p);
        let now = START;
        const admitted: number[] = [];
        for (const r of requests) {
          now += r.gap;
          if ((await f.decide(r.instance, 'acct', now)).allowed) admitted.push(now);
        }
        const slack = Math.min(instances * (maxLease(p) - 1), Math.ceil(LEASE_LIFETIME_US / t));
        for (let i = 0; i < admitted.length; i++) {
          for (let j = i; j < admitted.length; j++) {
            expect(j - i + 1).toBeLessThanOrEqual(p.burst + Math.floor((admitted[j]! - admitted[i]!) / t) + slack);
          }
        }
        // With one instance nothing is lost to another's lease: exactly the bucket's bound.
        if (instances === 1) for (let i = 0; i < admitted.length; i++) expect(admitted.filter((x) => x >= admitted[i]! && x < admitted[i]! + t).length).toBeLessThanOrEqual(p.burst);
      }),
      { numRuns: 150 },
    );
  });

  it('the slack is real: tokens one instance leased are still served after another drained the bucket', async () => {
    const p = { rate: 100, burst: 200 };
    const f = fleet(p, 2);
    let now = START;
    // Instance 0 sees 40 requests in 0.4 s: its lease grows toward k_max (20); it holds the rest of its last one.
    for (let i = 0; i < 40; i++) expect((await f.decide(0, 'acct', (now += 10_000))).allowed).toBe(true);
    expect(f.writes()).toBeLessThan(20);
    // A second later (the bucket is full again, the lease not yet expired) instance 1 drains the
    // bucket at one instant (it stops when fewer tokens are left than the lease it now asks for),
    // and instance 0 still serves what it holds.
    now += 1_000_000;
    let drained = 0;
    while ((await f.decide(1, 'acct', now)).allowed) drained++;
    let fromLease = 0;
    while ((await f.decide(0, 'acct', now)).allowed) fromLease++;
    expect(drained).toBeGreaterThan(p.burst - maxLease(p));
    expect(fromLease).toBeGreaterThan(0);
    expect(drained + fromLease).toBeLessThanOrEqual(p.burst + maxLease(p) - 1);
    expect((await f.decide(1, 'acct', now)).allowed).toBe(false);
  });

  it('an idle account (k = 1) gets the exact figures: the same decisions and headers as the single shared bucket, on one instance or many', async () => {
    await fc.assert(
      fc.asyncProperty(
        leasePolicyArb,
        fc.integer({ min: 1, max: 4 }),
        // Idle: at least 1.5 s between requests, so the instance's decayed count stays below 2.
        fc.array(fc.record({ gap: fc.integer({ min: 1_500_000, max: 30_000_000 }), instance: fc.nat() }), { minLength: 1, maxLength: 60 }),
        async (p, instances, requests) => {
          const f = fleet(p, instances);
          let exact: number | undefined;
          let now = START;
          for (const r of requests) {
            now += r.gap;
            const got = await f.decide(r.instance, 'acct', now);
            const want = gcra(exact, now, p);
            exact = want.tat;
            expect(got.allowed).toBe(want.decision.allowed);
            if (got.allowed || instances === 1) expect(got).toEqual(want.decision);
          }
          expect(f.writes()).toBeLessThanOrEqual(requests.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('at 10 requests/s or more per account on an instance, under or over the limit: at most 0.1 bucket writes per request', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double({ min: 10, max: 1_000, noNaN: true }), fc.boolean(), async (perSecond, jitter) => {
        const p = { rate: 100, burst: 200 };
        const f = fleet(p, 1);
        const gap = 1e6 / perSecond;
        let now = START;
        let writesAfterWarmUp = 0;
        let requestsAfterWarmUp = 0;
        for (let i = 0; now < START + 10e6; i++) {
          now += Math.round(jitter && i % 2 ? gap * 1.5 : jitter ? gap * 0.5 : gap);
          const before = f.writes();
          await f.decide(0, 'acct', now);
          if (now >= START + 2e6) {
            writesAfterWarmUp += f.writes() - before;
            requestsAfterWarmUp++;
          }
        }
        expect(writesAfterWarmUp / requestsAfterWarmUp).toBeLessThanOrEqual(0.1);
      }),
      { numRuns: 60 },
    );
  });

  it('one account at its limit never changes another account\'s decisions or figures', async () => {
    const p = { rate: 20, burst: 40 };
    const f = fleet(p, 2);
    let exact: number | undefined;
    const calm: [RateLimitDecision, RateLimitDecision][] = [];
    let now = START;
    let busyAdmitted = 0;
    for (let i = 0; i < 10_000; i++) {
      now += 1_000; // the busy account: 1,000 requests/s for 10 s against a limit of 20/s
      if ((await f.decide(i, 'busy', now)).allowed) busyAdmitted++;
      // The calm one: idle (one request per 1.5 s), on the same instances.
      if (i % 1_500 === 0) {
        const want = gcra(exact, now, p);
        exact = want.tat;
        calm.push([await f.decide(i, 'calm', now), want.decision]);
      }
    }
    expect(busyAdmitted).toBeGreaterThanOrEqual(40 + 10 * 20 - 2 * maxLease(p));
    expect(busyAdmitted).toBeLessThanOrEqual(40 + 10 * 20);
    expect(calm).toHaveLength(7);
    for (const [got, want] of calm) expect(got).toEqual(want);
  });
});
