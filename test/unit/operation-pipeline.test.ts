/**
 * The operation pipeline's middlewares in their order (shared/http/operation.ts): 405 before 401,
 * the scope (403) and the limiter (429: a write waits for it before anything, a read's answer is
 * replaced), rate-limit headers on every answer the limiter counted, per-request state in
 * `request.internal` (concurrent requests do not see each other's), log keys per invocation, and
 * idempotency only as the declaration says.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiEvent } from '../../local/invoke.js';
import { lambdaContext } from '../../local/handlers.js';
import { ApiError } from '../../shared/errors.js';
import { logger } from '../../shared/http/logger.js';
import { type ApiEvent, type OperationContext, operation } from '../../shared/http/operation.js';

const account = (scopes?: string[]) => ({ accountId: randomUUID(), userId: randomUUID(), ...(scopes ? { scopes } : {}) });

afterEach(() => {
  process.env.CRM_RATE_LIMIT = '0';
  vi.restoreAllMocks();
});

/** An operation that records what its run received. */
function probe(access: 'read' | 'write', run: (input: Record<string, unknown>, ctx: OperationContext) => Promise<unknown> = async (input) => input) {
  const calls: Array<{ input: Record<string, unknown>; ctx: OperationContext }> = [];
  const handler = operation({
    name: `contacts-probe-${access}`,
    family: 'contacts',
    access,
    parse: (body) => {
      if ('bad' in body) throw new ApiError('contacts.invalid_request', 'bad field');
      return body;
    },
    run: async (input, ctx) => {
      calls.push({ input, ctx });
      return run(input, ctx);
    },
  });
  const call = async (event: ApiEvent) => {
    const res = await handler(event, lambdaContext('probe'));
    return { status: res.statusCode, headers: res.headers ?? {}, body: JSON.parse(res.body!) as { ok: boolean; result?: unknown; error?: { code: string } } };
  };
  return { call, calls };
}

const withMethod = (event: ApiEvent, method: string) => ({ ...event, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method } } }) as ApiEvent;
const withoutAuth = (event: ApiEvent) => ({ ...event, requestContext: { ...event.requestContext, authorizer: undefined } }) as unknown as ApiEvent;

describe('operation pipeline: order of the checks', () => {
  it('answers 405 before authenticating, 401 before reading the body; neither counts against the limit (no headers)', async () => {
    process.env.CRM_RATE_LIMIT = '10,20';
    const { call, calls } = probe('write');
    const get = await call(withoutAuth(withMethod(apiEvent('contacts-probe-write', '{', account()), 'GET')));
    expect([get.status, get.body.error?.code]).toEqual([405, 'api.method_not_allowed']);
    const anonymous = await call(withoutAuth(apiEvent('contacts-probe-write', '{', account())));
    expect([anonymous.status, anonymous.body.error?.code]).toEqual([401, 'auth.unauthorized']);
    for (const r of [get, anonymous]) expect(r.headers).not.toHaveProperty('RateLimit-Limit');
    expect(calls).toHaveLength(0);
  });

  it('answers 403 for a scope the key lacks, counted (headers), before the body is read', async () => {
    process.env.CRM_RATE_LIMIT = '10,20';
    const { call, calls } = probe('write');
    const r = await call(apiEvent('contacts-probe-write', '{', account(['contacts:read'])));
    expect([r.status, r.body.error?.code]).toEqual([403, 'auth.forbidden']);
    expect(r.headers).toHaveProperty('RateLimit-Limit', '20');
    expect(calls).toHaveLength(0);
  });

  it.each([
    ['a success', '{"a":1}', 200],
    ['a parse failure', '{"bad":1}', 400],
    ['invalid JSON', '{', 400],
  ])('puts the RateLimit headers on %s', async (_what, body, status) => {
    process.env.CRM_RATE_LIMIT = '10,20';
    for (const access of ['read', 'write'] as const) {
      const r = await probe(access).call(apiEvent(`contacts-probe-${access}`, body, account()));
      expect(r.status).toBe(status);
      expect(r.headers).toMatchObject({ 'RateLimit-Limit': '20', 'content-type': 'application/json' });
    }
  });

  it('a write the limiter refuses runs nothing: 429 with Retry-After', async () => {
    process.env.CRM_RATE_LIMIT = '1,1';
    const auth = account();
    const { call, calls } = probe('write');
    expect((await call(apiEvent('contacts-probe-write', { n: 1 }, auth))).status).toBe(200);
    const refused = await call(apiEvent('contacts-probe-write', { n: 2 }, auth));
    expect([refused.status, refused.body.error?.code]).toEqual([429, 'api.rate_limited']);
    expect(refused.headers).toHaveProperty('Retry-After');
    expect(calls.map((c) => c.input)).toEqual([{ n: 1 }]);
  });

  it('a read the limiter refuses is answered 429, whatever its run answered (and its run errors too)', async () => {
    process.env.CRM_RATE_LIMIT = '1,1';
    const auth = account();
    const { call } = probe('read', async (input) => {
      if ('boom' in input) throw new Error('boom');
      return input;
    });
    expect((await call(apiEvent('contacts-probe-read', {}, auth))).status).toBe(200);
    for (const body of [{ n: 2 }, { boom: 1 }, { bad: 1 }]) {
      const r = await call(apiEvent('contacts-probe-read', body, auth));
      expect([r.status, r.body.error?.code]).toEqual([429, 'api.rate_limited']);
      expect(r.headers).toHaveProperty('Retry-After');
    }
  });

  it('an unexpected error is the family\'s 500 envelope, its detail only in the log', async () => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { call } = probe('write', async () => {
      throw new Error('detail at /var/task/x.ts:1');
    });
    const r = await call(apiEvent('contacts-probe-write', {}, account()));
    expect([r.status, r.body.error?.code]).toEqual([500, 'contacts.internal']);
    expect(JSON.stringify(r.body)).not.toMatch(/detail|\.ts:\d/);
  });
});

describe('operation pipeline: per-request state', () => {
  it('gives each of concurrent requests its own caller, input and headers (request.internal, no shared state)', async () => {
    const { call } = probe('read', async (input, ctx) => {
      await new Promise((r) => setTimeout(r, Number(input.wait)));
      return { n: input.n, account: ctx.accountId, header: ctx.headers['x-n'], operation: ctx.operation };
    });
    const auths = Array.from({ length: 6 }, () => account());
    const answers = await Promise.all(auths.map((auth, n) => call(apiEvent('contacts-probe-read', { n, wait: (6 - n) * 3 }, auth, { 'X-N': String(n) }))));
    expect(answers.map((a) => a.body.result)).toEqual(auths.map((auth, n) => ({ n, account: auth.accountId, header: String(n), operation: 'contacts-probe-read' })));
  });

  it('does not change the Lambda context it was given', async () => {
    const context = lambdaContext('probe');
    const before = { ...context };
    const handler = operation({ name: 'contacts-probe', family: 'contacts', access: 'read', parse: (b) => b, run: async () => 'ok' });
    expect((await handler(apiEvent('contacts-probe', {}, account()), context)).statusCode).toBe(200);
    expect({ ...context }).toEqual(before);
  });

  it('keys every log line with its own operation and request id, however requests interleave, and no line outside them', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const grab = (chunk: unknown) => {
      for (const line of String(chunk).split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(grab as never);
    vi.spyOn(process.stderr, 'write').mockImplementation(grab as never);
    const op = (name: string) =>
      operation({
        name,
        family: 'contacts',
        access: 'read',
        parse: (b) => b,
        run: async (input: Record<string, unknown>) => {
          for (let i = 0; i < 3; i++) {
            logger.critical('step', { n: input.n });
            await new Promise((r) => setTimeout(r, 1));
          }
          return null;
        },
      });
    const [a, b] = [op('contacts-a'), op('contacts-b')];
    const events = [0, 1, 2, 3].map((n) => apiEvent(n % 2 ? 'contacts-b' : 'contacts-a', { n }, account()));
    await Promise.all(events.map((e, n) => (n % 2 ? b : a)(e, lambdaContext('probe'))));
    logger.critical('outside');
    const steps = lines.filter((l) => l.message === 'step');
    expect(steps).toHaveLength(12);
    for (const line of steps) {
      const n = line.n as number;
      expect(line).toMatchObject({ operation: n % 2 ? 'contacts-b' : 'contacts-a', request_id: events[n]!.requestContext.requestId });
    }
    const outside = lines.find((l) => l.message === 'outside');
    expect(outside).not.toHaveProperty('operation');
    expect(outside).not.toHaveProperty('request_id');
  });
});

describe('operation pipeline: idempotency follows the declaration', () => {
  it('refuses, when built, an operation declared idempotent without the idempotency middleware, and the reverse', async () => {
    const spec = { name: 'contacts-create', family: 'contacts' as const, access: 'write' as const, parse: (b: Record<string, unknown>) => b, run: async () => null };
    expect(() => operation({ ...spec, idempotent: true })).toThrow(/idempotency must follow its declaration/);
    expect(() => operation({ ...spec, use: [{ name: 'idempotency', before: () => undefined }] })).toThrow(/idempotency must follow its declaration/);
    expect(() => operation({ ...spec, idempotent: true, use: [{ name: 'idempotency', before: () => undefined }] })).not.toThrow();
  });

  it('runs the run through what a middleware put in request.internal.around, after validation', async () => {
    const seen: string[] = [];
    const handler = operation({
      name: 'contacts-create',
      family: 'contacts',
      access: 'write',
      idempotent: true,
      use: [
        {
          name: 'idempotency',
          before: (request) => {
            seen.push(`before:${JSON.stringify(request.internal.input)}`);
            request.internal.around = async (run) => {
              seen.push('around');
              return { wrapped: await run() };
            };
          },
        },
      ],
      parse: (b) => b,
      run: async (input) => {
        seen.push('run');
        return input;
      },
    });
    const res = await handler(apiEvent('contacts-create', { a: 1 }, account()), lambdaContext('probe'));
    expect(JSON.parse(res.body!)).toEqual({ ok: true, result: { wrapped: { a: 1 } } });
    expect(seen).toEqual(['before:{"a":1}', 'around', 'run']);
  });
});
