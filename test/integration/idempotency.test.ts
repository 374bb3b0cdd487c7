import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../shared/auth/tokens.js';
import { db, tableName } from '../../shared/db/client.js';
import { controlTableName } from '../../shared/db/control.js';
import { idempotencyKeys, IDEMPOTENCY_TTL_ATTRIBUTE } from '../../shared/http/idempotency.js';
import { invoke, newAccount, ok, startServer, type TestServer } from '../helpers/api.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
/** Every contact of the caller's account with that first name (walks the list: search entries come from the stream worker, which this file does not run). */
const contactsNamed = async (first_name: string, token?: string) => {
  const found: { id: string; first_name: string }[] = [];
  let cursor = '';
  do {
    const r = await server.call<{ items: { id: string; first_name: string }[]; next_cursor: string }>('contacts-list', { limit: 100, ...(cursor ? { cursor } : {}) }, token ? { token } : {});
    expect(r.status).toBe(200);
    found.push(...r.body.result!.items.filter((c) => c.first_name === first_name));
    cursor = r.body.result!.next_cursor;
  } while (cursor);
  return found;
};

describe('Idempotency-Key on creates', () => {
  it('a retried create with the same key returns the first record and creates nothing new', async () => {
    const key = randomUUID();
    const name = `Idem${randomUUID().slice(0, 8)}`;
    const first = await server.call<{ id: string; first_name: string }>('contacts-create', { first_name: name, tags: ['vip'] }, withKey(key));
    const second = await server.call<{ id: string }>('contacts-create', { first_name: name, tags: ['vip'] }, withKey(key));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await contactsNamed(name)).toHaveLength(1);
  });

  it('stores the record in the control table (no stream), scoped by account and operation, with a 24 h TTL', async () => {
    const key = `k-${randomUUID()}`;
    const r = await server.call<{ id: string }>('sources-create', { name: 'Fair' }, withKey(key));
    expect(r.status).toBe(200);
    const item = (await db().send(new GetCommand({ TableName: controlTableName(), Key: idempotencyKeys.record(server.auth.accountId, 'sources-create', key) }))).Item;
    expect(item).toMatchObject({ pk: `IDEMP#${server.auth.accountId}#sources-create#${key}`, sk: 'IDEMP', status: 'COMPLETED' });
    expect(item!.data).toEqual(r.body.result);
    const ttl = Number(item![IDEMPOTENCY_TTL_ATTRIBUTE]);
    expect(ttl).toBeGreaterThan(Date.now() / 1000 + 23.9 * 3600);
    expect(ttl).toBeLessThan(Date.now() / 1000 + 24.1 * 3600);
    // Not in the streamed table: an idempotent create writes no stream record of its own.
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: idempotencyKeys.record(server.auth.accountId, 'sources-create', key) }))).Item).toBeUndefined();
  });

  it('the same key with a different body is <family>.conflict (409) and creates nothing', async () => {
    const key = randomUUID();
    const name = `Conf${randomUUID().slice(0, 8)}`;
    expect((await server.call('contacts-create', { first_name: name }, withKey(key))).status).toBe(200);
    const again = await server.call('contacts-create', { first_name: `${name}x` }, withKey(key));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ ok: false, error: { code: 'contacts.conflict' } });
    expect(await contactsNamed(`${name}x`)).toHaveLength(0);
    const company = await server.call('companies-create', { name: 'Acme' }, withKey(key));
    expect(company.status).toBe(200); // another operation: another scope
    const companyAgain = await server.call('companies-create', { name: 'Other' }, withKey(key));
    expect(companyAgain.body).toMatchObject({ ok: false, error: { code: 'companies.conflict' } });
  });

  it('concurrent duplicates create exactly one record and all get it', async () => {
    const key = randomUUID();
    const name = `Conc${randomUUID().slice(0, 8)}`;
    const replies = await Promise.all(Array.from({ length: 5 }, () => server.call<{ id: string }>('contacts-create', { first_name: name }, withKey(key))));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(replies.map((r) => r.body.result!.id)).size).toBe(1);
    expect(await contactsNamed(name)).toHaveLength(1);
  });

  it('different accounts with the same key are independent', async () => {
    const key = randomUUID();
    const other = newAccount();
    const otherToken = await issueToken(other);
    const name = `Acct${randomUUID().slice(0, 8)}`;
    const mine = await server.call<{ id: string; account_id: string }>('contacts-create', { first_name: name }, withKey(key));
    const theirs = await server.call<{ id: string; account_id: string }>('contacts-create', { first_name: name }, { ...withKey(key), token: otherToken });
    expect(mine.body.result!.account_id).toBe(server.auth.accountId);
    expect(theirs.body.result!.account_id).toBe(other.accountId);
    expect(theirs.body.result!.id).not.toBe(mine.body.result!.id);
    expect(await contactsNamed(name)).toHaveLength(1);
    expect(await contactsNamed(name, otherToken)).toHaveLength(1);
  });

  it('a failed first attempt leaves no record: the retry runs again', async () => {
    const key = randomUUID();
    const missing = randomUUID();
    const failed = await server.call('contacts-create', { first_name: 'Ref', company_id: missing }, withKey(key));
    expect(failed.body).toMatchObject({ ok: false, error: { code: 'contacts.invalid_company_id' } });
    const company = await ok<{ id: string }>('companies-create', { name: 'Ref Co' }, server.auth);
    const conflictFree = await server.call<{ company_id: string }>('contacts-create', { first_name: 'Ref', company_id: company.id }, withKey(key));
    expect(conflictFree.status).toBe(200);
    expect(conflictFree.body.result!.company_id).toBe(company.id);
  });

  it('without the header, creates are not deduplicated; on other operations the header is ignored', async () => {
    const name = `NoKey${randomUUID().slice(0, 8)}`;
    await server.call('contacts-create', { first_name: name });
    await server.call('contacts-create', { first_name: name });
    expect(await contactsNamed(name)).toHaveLength(2);
    const list = await invoke('contacts-list', {}, server.auth, { 'Idempotency-Key': 'x' });
    expect(list.status).toBe(200);
  });

  it('an invalid key is <family>.invalid_request, never a 500', async () => {
    const r = await server.call('companies-create', { name: 'Bad key' }, withKey('x'.repeat(256)));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ok: false, error: { code: 'companies.invalid_request', details: [{ path: 'Idempotency-Key' }] } });
    const spaces = await invoke('companies-create', { name: 'Bad key' }, server.auth, { 'Idempotency-Key': 'has space' });
    expect(spaces.body).toMatchObject({ ok: false, error: { code: 'companies.invalid_request' } });
  });

  it('replays webhooks-create with the same secret, stored encrypted, never in plain text', async () => {
    process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
    const key = `wh-${randomUUID()}`;
    const body = { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] };
    const first = await server.call<{ endpoint: { id: string }; signing_secret: string }>('webhooks-create', body, withKey(key));
    const second = await server.call<{ endpoint: { id: string }; signing_secret: string }>('webhooks-create', body, withKey(key));
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(first.body.result!.signing_secret).toMatch(/^whsec_/);
    const item = (await db().send(new GetCommand({ TableName: controlTableName(), Key: idempotencyKeys.record(server.auth.accountId, 'webhooks-create', key) }))).Item;
    expect(JSON.stringify(item)).not.toContain(first.body.result!.signing_secret);
    expect(JSON.stringify(item)).not.toContain(first.body.result!.signing_secret.slice(6));
    const list = await server.call<{ items: unknown[] }>('webhooks-list', {});
    expect(list.body.result!.items).toHaveLength(1);
  });
});
