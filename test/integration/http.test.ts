import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, revokeToken } from '../../shared/auth/tokens.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import { hashToken } from '../../shared/auth/tokens.js';
import { newAccount, startServer, type TestServer } from '../helpers/api.js';

describe('HTTP transport and authentication (local server)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => {
    await s.close();
  });

  it('answers 200 with the envelope, and treats an empty body as {}', async () => {
    const r = await s.call('contacts-list', undefined, { rawBody: '' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, result: { items: [], next_cursor: '' } });
  });

  it.each([
    ['no header', null],
    ['malformed', 'Basic abc'],
    ['unknown', 'crm_thisTokenDoesNotExistAnywhere000000'],
  ])('401 auth.unauthorized for a %s token, before the body is validated', async (_, token) => {
    const headers = token?.startsWith('Basic') ? { authorization: token } : undefined;
    const r = await s.call('contacts-create', '{not json', { token: token?.startsWith('Basic') ? null : token, rawBody: '{not json', headers });
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('auth.unauthorized');
  });

  it('rejects a revoked token and stores only hashes', async () => {
    const auth = newAccount();
    const token = await issueToken(auth);
    const stored = await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)) }));
    expect(JSON.stringify(stored.Item)).not.toContain(token);
    expect((await s.call('contacts-list', {}, { token })).status).toBe(200);
    expect(await revokeToken(token)).toBe(true);
    expect((await s.call('contacts-list', {}, { token })).status).toBe(401);
  });

  it.each([
    ['{"first_name":', 'contacts.invalid_request'],
    ['[1,2]', 'contacts.invalid_request'],
    ['"text"', 'contacts.invalid_request'],
    ['null', 'contacts.invalid_request'],
  ])('400 for body %s', async (rawBody, code) => {
    const r = await s.call('contacts-create', undefined, { rawBody });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ok: false, error: { code } });
  });

  it('413 for a body over 256 KiB, 404 for unknown operations, 405 for other methods', async () => {
    const big = await s.call('contacts-create', undefined, { rawBody: JSON.stringify({ first_name: 'A', notes: 'x'.repeat(300 * 1024) }) });
    expect(big.status).toBe(413);
    expect(big.body.error?.code).toBe('api.payload_too_large');
    const unknown = await s.call('contacts-explode', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe('api.unknown_operation');
    const get = await s.call('contacts-list', undefined, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.body.error?.code).toBe('api.method_not_allowed');
  });

  it('serves every family end to end with the contract statuses', async () => {
    const co = await s.call<{ id: string }>('companies-create', { name: 'Acme' });
    expect(co.status).toBe(200);
    const missing = await s.call('companies-create', { domain: 'x.com' });
    expect([missing.status, missing.body.error?.code]).toEqual([400, 'companies.name_required']);
    const nf = await s.call('companies-get', { id: '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f' });
    expect([nf.status, nf.body.error?.code]).toEqual([404, 'companies.not_found']);
    const src = await s.call('sources-create', { name: '' });
    expect([src.status, src.body.error?.code]).toEqual([400, 'sources.name_required']);
  });
});
