/**
 * API keys and scopes (contract §14) against DynamoDB Local: the four operations, scopes on every
 * operation of the registry, revocation and expiry, last_used_at, dev and admin tokens.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as authorizerHandler } from '../../functions/authorizer.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { operations } from '../../functions/operations.js';
import { hashToken, issueKey, issueToken, keyIdOf, revokeToken, saveToken } from '../../shared/auth/tokens.js';
import { db, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import { ALL_SCOPES, FULL_SCOPES } from '../../shared/schemas/api-keys.js';
import { invoke, newAccount, ok, startServer, type TestServer } from '../helpers/api.js';

const authorize = asFunction(functionByName('authorizer')!, authorizerHandler);

type Key = { id: string; name: string; prefix: string; scopes: string[]; expires_at: string | null; last_used_at: string | null; revoked_at: string | null; created_by: string; created_at: string };

/** The contract's rule (§14), written here independently of shared/auth/scopes.ts. */
const READ_SUFFIXES = ['-get', '-list', '-deliveries', '-errors', '-address', '-batch-get', '-stage-history', '-summary', '-board'];
const neededScope = (op: { name: string; family: string }) =>
  op.family === 'api_keys' ? 'api_keys:manage' : `${op.family}:${READ_SUFFIXES.some((s) => op.name.endsWith(s)) ? 'read' : 'write'}`;
function allowed(scope: string, op: { name: string; family: string }): boolean {
  const needed = neededScope(op);
  if (scope === needed || needed === 'api_keys:manage') return scope === needed;
  if (scope === '*') return true;
  if (needed.endsWith(':read')) return scope === '*:read' || scope === `${op.family}:write`;
  return false;
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});

const create = (body: unknown, token?: string) => s.call<{ api_key: Key; token: string }>('api-keys-create', body, token ? { token } : {});

describe('api-keys-create, -list, -get, -revoke', () => {
  it('creates a key whose token is shown once and stored only as a hash', async () => {
    const r = await create({ name: '  Reporting tool ', scopes: ['contacts:read', 'companies:write', 'contacts:read'], expires_at: '2099-01-01T00:00:00Z' });
    expect(r.status).toBe(200);
    const { api_key: key, token } = r.body.result!;
    expect(token).toMatch(/^crm_[A-Za-z0-9_-]{43}$/);
    expect(key).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Reporting tool',
      prefix: token.slice(0, 12),
      scopes: ['contacts:read', 'companies:write'],
      expires_at: '2099-01-01T00:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
      member_id: null,
      created_by: s.auth.userId,
      created_at: expect.any(String),
    });
    const record = await db().send(new GetCommand({ TableName: tableName(), Key: keys.apiKey(s.auth.accountId, key.id) }));
    const tokenItem = await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)) }));
    expect(tokenItem.Item).toMatchObject({ key_id: key.id, scopes: key.scopes });
    expect(JSON.stringify([record.Item, tokenItem.Item])).not.toContain(token);
    // get never shows the token; list shows the key.
    const got = await s.call<Key>('api-keys-get', { id: key.id });
    expect(got.body.result).toEqual(key);
    expect(JSON.stringify(got.body)).not.toContain(token);
  });

  it('lists the account’s keys newest first, paginated, and never another account’s', async () => {
    const other = await startServer();
    try {
      const made: string[] = [];
      for (let i = 0; i < 3; i++) made.push((await create({ name: `k${i}`, scopes: ['*:read'] }, other.token)).body.result!.api_key.id);
      const seen: Key[] = [];
      let cursor = '';
      do {
        const page = await other.call<{ items: Key[]; next_cursor: string }>('api-keys-list', { limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.status).toBe(200);
        seen.push(...page.body.result!.items);
        cursor = page.body.result!.next_cursor;
      } while (cursor);
      // The server's own token (`*` + api_keys:manage, created first) and the three, newest first.
      expect(seen.map((k) => k.name)).toEqual(['k2', 'k1', 'k0', 'admin token']);
      expect(seen[3]!.scopes).toEqual([...FULL_SCOPES]);
      const mine = await s.call<{ items: Key[] }>('api-keys-list', {});
      expect(mine.body.result!.items.map((k) => k.id)).not.toContain(made[0]);
      expect((await s.call('api-keys-get', { id: made[0] })).body.error?.code).toBe('api_keys.not_found');
      expect((await s.call('api-keys-revoke', { id: made[0] })).body.error?.code).toBe('api_keys.not_found');
      expect((await other.call('api-keys-list', { cursor: 'nonsense' })).body.error?.code).toBe('api_keys.invalid_cursor');
    } finally {
      await other.close();
    }
  });

  it('refuses unknown scopes, scopes the caller does not hold, and bad bodies', async () => {
    const unknown = await create({ name: 'x', scopes: ['contacts:read', 'contacts:delete', 'everything'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'api_keys.invalid_scopes', message: expect.stringContaining('contacts:delete') });
    expect((await create({ name: 'x', scopes: [] })).body.error?.code).toBe('api_keys.invalid_scopes');
    // A key with key management and contacts:read may hand out contacts:read, nothing more.
    const manager = (await create({ name: 'manager', scopes: ['api_keys:manage', 'contacts:read'] })).body.result!.token;
    expect((await create({ name: 'sub', scopes: ['contacts:read'] }, manager)).status).toBe(200);
    for (const scopes of [['contacts:write'], ['*:read'], ['*'], ['companies:read']]) {
      const r = await create({ name: 'sub', scopes }, manager);
      expect(r.status, scopes.join()).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'api_keys.invalid_scopes', message: expect.stringContaining(scopes[0]!) });
    }
    // `*` holds everything but key management: it cannot create keys at all.
    const star = (await create({ name: 'star', scopes: ['*'] })).body.result!.token;
    const r = await create({ name: 'sub', scopes: ['contacts:read'] }, star);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'auth.forbidden', message: expect.stringContaining('api_keys:manage') });
    for (const [body, path] of [
      [{ scopes: ['*'] }, 'name'],
      [{ name: ' ', scopes: ['*'] }, 'name'],
      [{ name: 'x'.repeat(201), scopes: ['*'] }, 'name'],
      [{ name: 'x', scopes: 'contacts:read' }, 'scopes'],
      [{ name: 'x', scopes: ['*'], expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'x', scopes: ['*'], expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', scopes: ['*'], token: 'crm_mine' }, 'token'],
    ] as const) {
      const bad = await create(body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'api_keys.invalid_request', details: [expect.objectContaining({ path })] });
    }
    expect((await s.call('api-keys-get', { id: 'nope' })).body.error?.code).toBe('api_keys.invalid_id');
    expect((await s.call('api-keys-get', {})).body.error?.code).toBe('api_keys.invalid_request');
  });

  it('revokes: the token answers 401 at once; revoking again returns the key unchanged', async () => {
    const { api_key: key, token } = (await create({ name: 'leaked', scopes: ['contacts:read'] })).body.result!;
    expect((await s.call('contacts-list', {}, { token })).status).toBe(200);
    const revoked = await s.call<Key>('api-keys-revoke', { id: key.id });
    expect(revoked.status).toBe(200);
    expect(revoked.body.result).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    const r = await s.call('contacts-list', {}, { token });
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('auth.unauthorized');
    const again = await s.call<Key>('api-keys-revoke', { id: key.id });
    expect(again.body.result!.revoked_at).toBe(revoked.body.result!.revoked_at);
    expect((await s.call<Key>('api-keys-get', { id: key.id })).body.result!.revoked_at).toBe(revoked.body.result!.revoked_at);
  });

  it('an expired key is 401, from the authorizer and from a decision cached before the expiry', async () => {
    const auth = newAccount();
    const { key, token } = await issueKey(auth, { scopes: ['contacts:read'], expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect((await authorize({ headers: { authorization: `Bearer ${token}` } })).context).toEqual({});
    expect((await s.call('contacts-list', {}, { token })).status).toBe(401);
    // A decision API Gateway cached while the key was valid: the operation refuses it itself.
    const cached = { ...auth, keyId: key.id, scopes: 'contacts:read', expiresAt: key.expires_at! };
    const r = await invoke('contacts-list', {}, cached as never);
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('auth.unauthorized');
    expect((await invoke('contacts-list', {}, { ...cached, expiresAt: new Date(Date.now() + 60_000).toISOString() } as never)).status).toBe(200);
  });

  it('last_used_at: null until used, then set, and not written again within a minute', async () => {
    const { api_key: key, token } = (await create({ name: 'used', scopes: ['contacts:read'] })).body.result!;
    expect((await s.call<Key>('api-keys-get', { id: key.id })).body.result!.last_used_at).toBeNull();
    const before = Date.now();
    expect((await s.call('contacts-list', {}, { token })).status).toBe(200);
    const first = (await s.call<Key>('api-keys-get', { id: key.id })).body.result!.last_used_at;
    expect(first).not.toBeNull();
    expect(Date.parse(first!)).toBeGreaterThanOrEqual(before - 5);
    expect((await s.call('contacts-get', { id: randomUUID() }, { token })).status).toBe(404);
    expect((await s.call<Key>('api-keys-get', { id: key.id })).body.result!.last_used_at).toBe(first);
  });
});

describe('scopes on every operation of the registry', () => {
  it('each scope against each family’s read and write operations: 403 naming the missing scope, before the body is read', async () => {
    const auth = newAccount();
    const failures: string[] = [];
    for (const scope of ALL_SCOPES) {
      const caller = { ...auth, keyId: randomUUID(), scopes: scope };
      await Promise.all(
        operations.map(async (op) => {
          // An unknown field: every allowed call stops at validation, so nothing is written.
          const r = await invoke(op.name, { __probe__: 1 }, caller as never);
          if (allowed(scope, op)) {
            if (r.status === 403) failures.push(`${scope} → ${op.name}: 403, expected allowed`);
          } else if (r.status !== 403 || r.body.error?.code !== 'auth.forbidden' || !r.body.error.message.includes(neededScope(op))) {
            failures.push(`${scope} → ${op.name}: ${r.status} ${JSON.stringify(r.body.error)}, expected 403 naming ${neededScope(op)}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
    // Every family of the registry appears with both a read and a write operation, or key management;
    // the change log (events) and the trash (trash-list) are read-only (their writes are the records' own:
    // a delete trashes, `<family>-restore` needs the record family's write scope).
    const families = new Set(operations.map((o) => o.family));
    for (const f of families) if (f !== 'api_keys' && f !== 'events' && f !== 'trash') expect(operations.some((o) => o.family === f && neededScope(o).endsWith(':write')), f).toBe(true);
  }, 180_000);

  it('over HTTP, a scoped key reads and writes what it holds and nothing else', async () => {
    const token = (await create({ name: 'crm sync', scopes: ['contacts:write', 'companies:read'] })).body.result!.token;
    const c = await s.call<{ id: string }>('contacts-create', { first_name: 'Scoped' }, { token });
    expect(c.status).toBe(200);
    expect((await s.call('contacts-get', { id: c.body.result!.id }, { token })).status).toBe(200);
    expect((await s.call('companies-list', {}, { token })).status).toBe(200);
    const denied = await s.call('companies-create', { name: 'No' }, { token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ ok: false, error: { code: 'auth.forbidden', message: expect.stringContaining('companies:write'), request_id: expect.any(String) } });
    expect((await s.call('webhooks-list', {}, { token })).body.error?.message).toContain('webhooks:read');
  });
});

describe('dev tokens, admin tokens and tokens from before keys', () => {
  it('a seeded dev token becomes one key with * and api_keys:manage, however often it is seeded', async () => {
    const auth = newAccount();
    const token = `dev-token-${randomUUID()}`;
    await saveToken(token, auth);
    await saveToken(token, auth);
    const items = (await ok<{ items: Key[] }>('api-keys-list', {}, auth)).items;
    expect(items).toEqual([expect.objectContaining({ id: keyIdOf(token), name: 'dev token', scopes: ['*', 'api_keys:manage'], prefix: token.slice(0, 12) })]);
    expect((await authorize({ headers: { authorization: `Bearer ${token}` } })).context).toEqual({ accountId: auth.accountId, userId: auth.userId, keyId: keyIdOf(token), scopes: '* api_keys:manage' });
    // Revoked, it stays revoked when seeded again (a restart with the same data).
    expect(await revokeToken(token)).toBe(true);
    await saveToken(token, auth);
    expect((await authorize({ headers: { authorization: `Bearer ${token}` } })).context).toEqual({});
  });

  it('the admin command’s tokens hold * and api_keys:manage unless given scopes', async () => {
    const auth = newAccount();
    const full = await issueToken(auth);
    const scoped = await issueToken(auth, { scopes: ['contacts:read'], name: 'report' });
    expect((await authorize({ headers: { authorization: `Bearer ${full}` } })).context).toMatchObject({ scopes: '* api_keys:manage' });
    expect((await authorize({ headers: { authorization: `Bearer ${scoped}` } })).context).toMatchObject({ scopes: 'contacts:read' });
  });

  it('a token item written before keys existed holds * and api_keys:manage', async () => {
    const auth = newAccount();
    const token = `crm_legacy${randomUUID()}`;
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.token(hashToken(token)), account_id: auth.accountId, user_id: auth.userId, created_at: new Date().toISOString() } }));
    const context = (await authorize({ headers: { authorization: `Bearer ${token}` } })).context;
    expect(context).toEqual({ accountId: auth.accountId, userId: auth.userId, scopes: '* api_keys:manage' });
    expect((await s.call('api-keys-list', {}, { token })).status).toBe(200);
    expect(await revokeToken(token)).toBe(true);
    expect((await s.call('contacts-list', {}, { token })).status).toBe(401);
  });
});
