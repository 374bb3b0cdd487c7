import { operations } from '../../functions/operations.js';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type Contact, createClient, CrmError, type CrmClient, isCrmError, verifyWebhook, WebhookVerificationError } from '../../client/index.js';
import { startServer, type TestServer } from '../helpers/api.js';

let server: TestServer;
let crm: CrmClient;
beforeAll(async () => {
  server = await startServer();
  crm = createClient({ baseUrl: server.baseUrl, token: server.token });
});
afterAll(async () => {
  await server.close();
});

/** A fetch that answers the first `failures` calls itself (a status, or a thrown network error), then the real server. */
function flakyFetch(failures: (number | 'network' | 'lost')[]) {
  const seen: { status: number | string; idempotencyKey: string | null }[] = [];
  const impl: typeof fetch = async (input, init) => {
    const next = failures.shift();
    const key = new Headers(init?.headers).get('idempotency-key');
    if (next === 'network') {
      seen.push({ status: 'network', idempotencyKey: key });
      throw new TypeError('fetch failed');
    }
    if (next === 'lost') {
      // The request reaches the server, the answer is lost on the way back.
      await fetch(input, init);
      seen.push({ status: 'lost', idempotencyKey: key });
      throw new TypeError('socket hang up');
    }
    if (typeof next === 'number') {
      seen.push({ status: next, idempotencyKey: key });
      return new Response(JSON.stringify({ ok: false, error: { code: 'api.rate_limited', message: 'slow down' } }), { status: next, headers: next === 429 ? { 'retry-after': '0' } : {} });
    }
    const res = await fetch(input, init);
    seen.push({ status: res.status, idempotencyKey: key });
    return res;
  };
  return { impl, seen };
}

describe('typed client against the local server', () => {
  it('has one method per operation, grouped by family', () => {
    // One group per family of the registry (every entity of the entity list among them).
    const groups = [...new Set(operations.map((o) => o.family.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())))];
    expect(Object.keys(crm).sort()).toEqual(['call', ...groups].sort());
    expect(Object.keys(crm)).toEqual(expect.arrayContaining(['projects', 'activities']));
    expect(Object.keys(crm.contacts).sort()).toEqual(['batchCreate', 'batchDelete', 'batchGet', 'batchUpdate', 'batchUpsert', 'create', 'delete', 'get', 'list', 'merge', 'restore', 'summary', 'update']);
    // Trash, restore and merge (contract §15): typed like the records they answer.
    expectTypeOf(crm.contacts.restore).returns.resolves.toEqualTypeOf<Contact>();
    expectTypeOf(crm.contacts.merge).returns.resolves.toEqualTypeOf<Contact>();
    expect(Object.keys(crm.trash)).toEqual(['list']);
    const verbs = (family: string) => operations.filter((o) => o.family === family).map((o) => o.name.slice(o.family.length + 1).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase())).sort();
    expect(Object.keys(crm.webhooks).sort()).toEqual(verbs('webhooks'));
    expect(verbs('webhooks')).toEqual(expect.arrayContaining(['create', 'delete', 'deliveries', 'get', 'list', 'update']));
    expectTypeOf(crm.contacts.get).returns.resolves.toEqualTypeOf<Contact>();
    expectTypeOf<{ first_name: string }>().toExtend<Parameters<typeof crm.contacts.create>[0]>();
  });

  it('creates, gets, updates, lists and deletes with typed results', async () => {
    const company = await crm.companies.create({ name: 'Client Co', tags: ['b2b'] });
    const source = await crm.sources.create({ name: 'Client fair' });
    const contact = await crm.contacts.create({ first_name: 'Grace', last_name: 'Hopper', company_id: company.id, source_id: source.id, tags: ['vip'] });
    expect(contact).toMatchObject({ first_name: 'Grace', company_name: 'Client Co', source_name: 'Client fair', tags: ['vip'] });
    expect(await crm.contacts.get({ id: contact.id })).toEqual(contact);
    const updated = await crm.contacts.update({ id: contact.id, job_title: 'Admiral' });
    expect(updated.job_title).toBe('Admiral');
    const page = await crm.contacts.list({ tags: ['vip'] });
    expect(page.items.map((c) => c.id)).toContain(contact.id);
    expect(page.next_cursor).toBe('');
    const field = await crm.customFields.create({ entity_type: 'contact', name: 'Tier', field_type: 'select', options: ['gold', 'silver'] });
    expect((await crm.customFields.list()).items.map((f) => f.id)).toContain(field.id);
    expect(await crm.contacts.delete({ id: contact.id })).toEqual({ deleted: true });
  });

  it('batches: typed per-item results', async () => {
    const out = await crm.contacts.batchCreate({ items: [{ first_name: 'Batch' }, { first_name: '' }] }, { idempotencyKey: randomUUID() });
    const [first, second] = out.results;
    expect(first).toMatchObject({ index: 0, ok: true, action: 'created', record: { first_name: 'Batch' } });
    expect(second).toMatchObject({ index: 1, ok: false, error: { code: 'contacts.first_name_required' } });
    const id = first!.ok ? first!.record!.id : '';
    expectTypeOf(crm.contacts.batchGet).returns.resolves.toEqualTypeOf<{ items: Contact[]; not_found: string[] }>();
    expect((await crm.contacts.batchGet({ ids: [id] })).items.map((c) => c.first_name)).toEqual(['Batch']);
    const upserted = await crm.companies.batchUpsert({ items: [{ domain: 'batch.example', name: 'Batch Co' }] });
    expect(upserted.results[0]).toMatchObject({ ok: true, action: 'created' });
    expect((await crm.contacts.batchDelete({ ids: [id] })).results).toEqual([{ index: 0, ok: true, action: 'deleted' }]);
  });

  it('iterates every item of every page with for await', async () => {
    const tag = `t${randomUUID().slice(0, 8)}`;
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await crm.contacts.create({ first_name: `Iter${i}`, tags: [tag] })).id);
    const seen: string[] = [];
    for await (const c of crm.contacts.list({ tags: [tag], limit: 3 })) seen.push(c.id);
    expect(seen).toEqual([...created].reverse());
    const pages: number[] = [];
    for await (const p of crm.contacts.list({ tags: [tag], limit: 3 }).pages()) pages.push(p.items.length);
    expect(pages).toEqual([3, 3, 1]);
  });

  it('throws CrmError with the contract code, status and details', async () => {
    const missing = await crm.contacts.get({ id: randomUUID() }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(CrmError);
    expect(missing).toMatchObject({ code: 'contacts.not_found', status: 404, family: 'contacts', operation: 'contacts-get' });
    const invalid = await crm.contacts.create({ first_name: 'X', email: 'not-an-email' }).catch((e: unknown) => e);
    expect(isCrmError(invalid, 'contacts.invalid_request')).toBe(true);
    expect((invalid as CrmError).details).toEqual([expect.objectContaining({ path: 'email' })]);
    const unauthorized = createClient({ baseUrl: server.baseUrl, token: 'wrong' });
    await expect(unauthorized.sources.list()).rejects.toMatchObject({ code: 'auth.unauthorized', status: 401 });
  });

  it('retries idempotent calls on 429, 5xx and network errors', async () => {
    const { impl, seen } = flakyFetch([503, 'network', 429]);
    const client = createClient({ baseUrl: server.baseUrl, token: server.token, fetch: impl, retry: { baseDelayMs: 1 } });
    const page = await client.sources.list();
    expect(page.items.length).toBeGreaterThan(0);
    expect(seen.map((s) => s.status)).toEqual([503, 'network', 429, 200]);
  });

  it('gives up after maxRetries with the last error', async () => {
    const { impl, seen } = flakyFetch([500, 500, 500]);
    const client = createClient({ baseUrl: server.baseUrl, token: server.token, fetch: impl, retry: { baseDelayMs: 1, maxRetries: 2 } });
    await expect(client.contacts.list()).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a create without an Idempotency-Key', async () => {
    const { impl, seen } = flakyFetch([503]);
    const client = createClient({ baseUrl: server.baseUrl, token: server.token, fetch: impl, retry: { baseDelayMs: 1 } });
    await expect(client.sources.create({ name: 'Once' })).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('retries a create with an Idempotency-Key whose answer was lost: one record, the first result', async () => {
    const { impl, seen } = flakyFetch(['lost']);
    const client = createClient({ baseUrl: server.baseUrl, token: server.token, fetch: impl, retry: { baseDelayMs: 1 } });
    const name = `Lost${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const contact = await client.contacts.create({ first_name: name }, { idempotencyKey: key });
    expect(seen.map((s) => [s.status, s.idempotencyKey])).toEqual([
      ['lost', key],
      [200, key],
    ]);
    const all: Contact[] = [];
    // (Walks the list rather than searching: search entries come from the stream worker, which this file does not run.)
    for await (const c of crm.contacts.list()) if (c.first_name === name) all.push(c);
    expect(all.map((c) => c.id)).toEqual([contact.id]);
  });

  it('verifies Standard Webhooks signatures', () => {
    const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    const body = JSON.stringify({ id: randomUUID(), event: 'contact.created', timestamp: new Date().toISOString(), data: { first_name: 'Ada' } });
    const id = `msg_${randomUUID()}`;
    const now = new Date();
    const signature = new Webhook(secret).sign(id, now, body);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature };
    expect(verifyWebhook(secret, body, headers)).toMatchObject({ event: 'contact.created', data: { first_name: 'Ada' } });
    expect(verifyWebhook(secret, body, new Headers(headers)).event).toBe('contact.created');
    expect(() => verifyWebhook(secret, body.replace('Ada', 'Eve'), headers)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, body, { ...headers, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000) - 3600) })).toThrow(WebhookVerificationError);
  });
});
