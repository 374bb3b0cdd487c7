/** The operation() pipeline on its own: auth → body → parse → run → envelope, and its one error path. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.js';
import { type ApiEvent, operation } from '../../shared/http/operation.js';

const AUTH = { accountId: '00000000-0000-4000-8000-000000000001', userId: '00000000-0000-4000-8000-000000000002' };

function event(body: string | undefined, opts: { method?: string; auth?: typeof AUTH | null } = {}): ApiEvent {
  return {
    body,
    isBase64Encoded: false,
    headers: { 'content-type': 'application/json' },
    requestContext: { http: { method: opts.method ?? 'POST' }, authorizer: opts.auth === null ? undefined : { lambda: opts.auth ?? AUTH }, requestId: 'req-1' },
  } as unknown as ApiEvent;
}

const run = async (h: ReturnType<typeof operation>, e: ApiEvent) => {
  const out = (await h(e, {} as never)) as { statusCode: number; body: string };
  return { status: out.statusCode, body: JSON.parse(out.body) as { ok: boolean; result?: unknown; error?: { code: string; message: string } } };
};

describe('operation()', () => {
  const echo = operation({
    name: 'things-create',
    family: 'contacts',
    access: 'write',
    parse: (body) => {
      if ('bad' in body) throw new ApiError('contacts.invalid_request', 'bad field', [{ path: 'bad', message: 'no' }]);
      return body;
    },
    run: async (input, ctx) => {
      if ('boom' in input) throw new Error('secret internal detail at /var/task/x.ts:1');
      return { input, account: ctx.accountId, op: ctx.operation };
    },
  });

  it('wraps the result in the success envelope with the caller and operation', async () => {
    expect(await run(echo, event('{"a":1}'))).toEqual({ status: 200, body: { ok: true, result: { input: { a: 1 }, account: AUTH.accountId, op: 'things-create' } } });
  });

  it('treats an empty body as {}', async () => {
    expect((await run(echo, event(''))).body.result).toMatchObject({ input: {} });
  });

  it.each([
    ['no authorizer context', event('{}', { auth: null }), 401, 'auth.unauthorized'],
    ['a GET', event('{}', { method: 'GET' }), 405, 'api.method_not_allowed'],
    ['invalid JSON', event('{'), 400, 'contacts.invalid_request'],
    ['an array', event('[]'), 400, 'contacts.invalid_request'],
    ['a body over 256 KiB', event(JSON.stringify({ a: 'x'.repeat(256 * 1024) })), 413, 'api.payload_too_large'],
    ['a parse failure', event('{"bad":1}'), 400, 'contacts.invalid_request'],
    ['an unexpected error', event('{"boom":1}'), 500, 'contacts.internal'],
  ])('answers %s with the contract envelope', async (_what, e, status, code) => {
    const r = await run(echo, e);
    expect(r.status).toBe(status);
    expect(r.body.ok).toBe(false);
    expect(r.body.error?.code).toBe(code);
    expect(JSON.stringify(r.body)).not.toMatch(/secret internal detail|\.ts:\d/);
  });
});
