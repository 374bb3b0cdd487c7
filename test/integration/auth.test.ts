import { describe, expect, it } from 'vitest';
import { handler as authorizerHandler } from '../../functions/authorizer.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { issueToken, revokeToken } from '../../shared/auth/tokens.js';
import { invoke, newAccount } from '../helpers/api.js';

const authorize = asFunction(functionByName('authorizer')!, authorizerHandler);

describe('authorizer and handler auth (the deployed path)', () => {
  it('passes account and user for a valid token, an empty context otherwise', async () => {
    const auth = newAccount();
    const token = await issueToken(auth);
    expect(await authorize({ headers: { authorization: `Bearer ${token}` } })).toEqual({ isAuthorized: true, context: { ...auth, keyId: expect.any(String), scopes: '* api_keys:manage' } });
    for (const header of [undefined, '', 'Bearer', `Basic ${token}`, 'Bearer short', `Bearer ${token}x`]) {
      expect(await authorize({ headers: header === undefined ? {} : { authorization: header } })).toEqual({ isAuthorized: true, context: {} });
    }
    await revokeToken(token);
    expect((await authorize({ headers: { authorization: `Bearer ${token}` } })).context).toEqual({});
  });

  it('handlers answer an empty authorizer context with 401 auth.unauthorized before reading the body', async () => {
    const r = await invoke('contacts-create', '{broken json', undefined);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, error: { code: 'auth.unauthorized', message: expect.any(String), request_id: expect.any(String) } });
  });
});
