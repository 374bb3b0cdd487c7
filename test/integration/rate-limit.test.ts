/**
 * Per-account rate limits (contract §14) through the local server and DynamoDB Local: the shared
 * bucket under a burst of many concurrent clients of one account while another account goes on
 * unaffected, the RateLimit headers on every answer, 429 api.rate_limited with Retry-After.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, isCrmError, type RateLimitInfo } from '../../client/index.js';
import { createApiServer } from '../../local/server.js';
import { issueToken } from '../../shared/auth/tokens.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { rateLimitStats } from '../../shared/domain/rate-limit.js';
import { invoke, newAccount } from '../helpers/api.js';

let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createApiServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
afterEach(() => {
  process.env.CRM_RATE_LIMIT = '0';
});

interface Answer {
  status: number;
  headers: Headers;
  body: { ok: boolean; error?: { code: string; message: string } };
}
async function call(token: string, op: string, body: unknown = {}): Promise<Answer> {
  const res = await fetch(`${baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}
const figures = (a: Answer) => ({
  limit: Number(a.headers.get('ratelimit-limit')),
  remaining: Number(a.headers.get('ratelimit-remaining')),
  reset: Number(a.headers.get('ratelimit-reset')),
});

describe('rate limits per account', () => {
  it('a burst of many concurrent clients of one account: at most burst + rate × time pass, the rest are 429; another account is unaffected', async () => {
    process.env.CRM_RATE_LIMIT = '1,20';
    const busyAccount = newAccount();
    const busy = await issueToken(busyAccount);
    const calm = await issueToken(newAccount());
    const started = performance.now();
    // 60 concurrent clients of the busy account, over three keys: the bucket is the account's.
    const keysOfBusy = [busy, await issueToken(busyAccount, { scopes: ['contacts:read'] }), await issueToken(busyAccount, { scopes: ['*:read'] })];
    const [burst, calmAnswers] = await Promise.all([
      Promise.all(Array.from({ length: 60 }, (_, i) => call(keysOfBusy[i % keysOfBusy.length]!, 'contacts-list', { limit: 1 }))),
      // Meanwhile the calm account makes 12 calls, 4 at a time.
      (async () => {
        const out: Answer[] = [];
        for (let i = 0; i < 3; i++) out.push(...(await Promise.all(Array.from({ length: 4 }, () => call(calm, 'contacts-list', { limit: 1 })))));
        return out;
      })(),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const passed = burst.filter((a) => a.status === 200);
    const refused = burst.filter((a) => a.status === 429);
    expect(passed.length + refused.length).toBe(60);
    expect(passed.length).toBeGreaterThanOrEqual(20);
    expect(passed.length).toBeLessThanOrEqual(20 + Math.ceil(seconds) + 1);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.body).toEqual({ ok: false, error: { code: 'api.rate_limited', message: expect.any(String), request_id: expect.any(String) } });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(figures(a)).toMatchObject({ limit: 20, remaining: 0 });
    }
    for (const a of passed) expect(figures(a).remaining).toBeLessThan(20);
    // The other account: every call passed, its own bucket barely touched.
    expect(calmAnswers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(Math.min(...calmAnswers.map((a) => figures(a).remaining))).toBeGreaterThanOrEqual(20 - 12);
  }, 120_000);

  it('headers on every answer (success and error) with exact arithmetic; 429 with Retry-After; 0 turns it off', async () => {
    // One request per 10 s refilled: the figures cannot move during the test.
    process.env.CRM_RATE_LIMIT = '0.1,4';
    const token = await issueToken(newAccount());
    const scoped = await issueToken(newAccount(), { scopes: ['contacts:read'] });
    const answers = [
      await call(token, 'contacts-list', {}),
      await call(token, 'contacts-create', {}), // 400 contacts.first_name_required
      await call(token, 'contacts-get', { id: randomUUID() }), // 404
      await call(token, 'contacts-list', { limit: 0 }), // 400
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 400, 404, 400]);
    // Reset: when the bucket is full again — 10 s per request taken, less the time the calls took.
    const near = (seconds: number) => expect.toSatisfy((n: number) => n <= seconds && n >= seconds - 3);
    expect(answers.map(figures)).toEqual([3, 2, 1, 0].map((remaining, i) => ({ limit: 4, remaining, reset: near(10 * (i + 1)) })));
    const over = await call(token, 'contacts-list', {});
    expect(over.status).toBe(429);
    expect(over.body.error?.code).toBe('api.rate_limited');
    expect(figures(over)).toEqual({ limit: 4, remaining: 0, reset: near(40) });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(7);
    expect(retryAfter).toBeLessThanOrEqual(10);
    // A forbidden call is counted and carries the headers too.
    const forbidden = await call(scoped, 'contacts-create', { first_name: 'x' });
    expect(forbidden.status).toBe(403);
    expect(figures(forbidden)).toEqual({ limit: 4, remaining: 3, reset: near(10) });
    // An unauthenticated call belongs to no account: no headers.
    const anonymous = await call('crm_nobodyHasThisTokenAtAll000000000000000000', 'contacts-list');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit-limit')).toBeNull();
    process.env.CRM_RATE_LIMIT = '0';
    const off = await call(token, 'contacts-list', {});
    expect(off.status).toBe(200);
    expect(off.headers.get('ratelimit-limit')).toBeNull();
  });

  it('the same limit holds when handlers are invoked directly (the Lambda path), and counts every key of the account', async () => {
    process.env.CRM_RATE_LIMIT = '0.1,3';
    const auth = newAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await invoke('contacts-list', {}, { ...auth, keyId: randomUUID(), scopes: ['*'] } as never)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('the client manages keys, reports RateLimit figures, and surfaces 429 and 403 as CrmError', async () => {
    process.env.CRM_RATE_LIMIT = '0.1,3';
    const seen: RateLimitInfo[] = [];
    const crm = createClient({ baseUrl, token: await issueToken(newAccount()), retry: { maxRetries: 0 }, onRateLimit: (info) => seen.push(info) });
    const { api_key: key, token } = await crm.apiKeys.create({ name: 'reader', scopes: ['contacts:read'] });
    expect((await crm.apiKeys.get({ id: key.id })).scopes).toEqual(['contacts:read']);
    expect(seen.map((i) => [i.operation, i.limit, i.remaining])).toEqual([['api-keys-create', 3, 2], ['api-keys-get', 3, 1]]);
    const reader = createClient({ baseUrl, token, retry: { maxRetries: 0 } });
    await expect(reader.contacts.create({ first_name: 'x' })).rejects.toSatisfy((e) => isCrmError(e, 'auth.forbidden') && e.status === 403);
    // The reader's key is the same account's: its forbidden call took the last request of the bucket.
    await expect(crm.apiKeys.list()).rejects.toSatisfy((e) => isCrmError(e, 'api.rate_limited') && e.status === 429);
  });

  it('leases: a busy account costs at most 0.1 bucket write units per request on an instance, and none is refused', { timeout: 120_000 }, async () => {
    process.env.CRM_RATE_LIMIT = '100,200';
    const auth = newAccount();
    const round = () => Promise.all(Array.from({ length: 10 }, () => invoke('contacts-get', { id: randomUUID() }, auth)));
    // Warm-up: the instance learns the account's rate (its lease grows from 1 token).
    for (let i = 0; i < 5; i++) await round();
    const before = rateLimitStats();
    const { result: rounds, usage } = await measureCapacity(async () => {
      const out = [];
      for (let i = 0; i < 20; i++) out.push(...(await round()));
      return out;
    });
    const after = rateLimitStats();
    expect(rounds.map((r) => r.status)).toEqual(Array(200).fill(404));
    // 404s read one item and write nothing: every write unit here is the limiter's.
    expect(after.requests - before.requests).toBe(200);
    expect(usage.wcu / 200).toBeLessThanOrEqual(0.1);
    expect((after.writes - before.writes) / 200).toBeLessThanOrEqual(0.1);
    expect(usage.wcu).toBeGreaterThan(0);
  });
});
