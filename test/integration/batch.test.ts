/**
 * Batch operations (contract §13): every rule, against DynamoDB Local through the handlers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationByName } from '../../functions/operations.js';
import { ENTITIES } from '../../shared/schemas/entities/index.js';
import { invoke, newAccount, ok, startServer, type TestServer } from '../helpers/api.js';
import type { AuthContext } from '../../shared/http/operation.js';

type Rec = Record<string, unknown> & { id: string };
type ItemResult = { index: number; ok: boolean; action?: string; record?: Rec; error?: { code: string; message: string; details?: { path: string; message: string }[] } };
type Results = { results: ItemResult[] };

const codes = (r: Results) => r.results.map((x) => (x.ok ? x.action : x.error!.code));

describe('batch-create', () => {
  it('applies the valid items, answers every item in input order with the single create’s codes', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const src = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    const field = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Score', field_type: 'number' }, auth);
    const out = await ok<Results>(
      'contacts-batch-create',
      {
        items: [
          { first_name: 'Ada', company_id: co.id, source_id: src.id, tags: ['vip', 'vip'], custom_fields: { [field.id]: 3 } },
          { last_name: 'No first name' },
          { first_name: 'Bad company', company_id: randomUUID() },
          { first_name: 'Bad field', custom_fields: { [field.id]: 'three' } },
          { first_name: 'Read-only', id: randomUUID() },
          'not an object',
          { first_name: 'Bad email', email: 'nope' },
          { first_name: 'Grace', email: 'grace@example.com' },
        ],
      },
      auth,
    );
    expect(out.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(codes(out)).toEqual([
      'created',
      'contacts.first_name_required',
      'contacts.invalid_company_id',
      'contacts.invalid_custom_fields',
      'contacts.invalid_request',
      'contacts.invalid_request',
      'contacts.invalid_request',
      'created',
    ]);
    const ada = out.results[0]!.record!;
    // Computed names, defaults and rules exactly as the single create.
    expect(ada).toMatchObject({ first_name: 'Ada', company_name: 'Acme', source_name: 'Fair', tags: ['vip'], custom_fields: { [field.id]: 3 }, created_by: auth.userId, account_id: auth.accountId });
    expect(await ok<Rec>('contacts-get', { id: ada.id }, auth)).toEqual(ada);
    expect(out.results[4]!.error!.details).toEqual([{ path: 'id', message: 'field is read-only' }]);
    const listed = await ok<{ items: Rec[] }>('contacts-list', { limit: 100 }, auth);
    expect(listed.items.map((c) => c.first_name).sort()).toEqual(['Ada', 'Grace']);
    // Index entries were written with the records: filters find them at once.
    expect((await ok<{ items: Rec[] }>('contacts-list', { tags: ['vip'], company_id: co.id, source_ids: [src.id] }, auth)).items.map((c) => c.id)).toEqual([ada.id]);
  });

  it('takes 100 items; 0, 101 or a non-array is the whole call’s invalid_request and applies nothing', async () => {
    const auth = newAccount();
    const hundred = await ok<Results>('sources-batch-create', { items: Array.from({ length: 100 }, (_, i) => ({ name: `S${i}` })) }, auth);
    expect(hundred.results).toHaveLength(100);
    expect(hundred.results.every((r, i) => r.ok && r.index === i && r.record!.name === `S${i}`)).toBe(true);
    const other = newAccount();
    for (const body of [{ items: Array.from({ length: 101 }, (_, i) => ({ name: `T${i}` })) }, { items: [] }, { items: { name: 'x' } }, {}, { items: [{ name: 'x' }], extra: 1 }]) {
      const r = await invoke('sources-batch-create', body, other);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body.error!.code).toBe('sources.invalid_request');
    }
    expect((await ok<{ items: Rec[] }>('sources-list', {}, other)).items).toEqual([]);
    expect((await invoke('sources-batch-delete', { ids: Array.from({ length: 101 }, () => randomUUID()) }, other)).status).toBe(400);
    expect((await invoke('sources-batch-get', { ids: 'x' }, other)).body.error!.code).toBe('sources.invalid_request');
  });

  it('another account’s references are not found', async () => {
    const mine = newAccount();
    const theirs = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Theirs' }, theirs);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada' }, mine);
    const out = await ok<Results>('projects-batch-create', { items: [{ name: 'P1', company_id: co.id }, { name: 'P2', contact_ids: [ada.id, randomUUID()] }, { name: 'P3', contact_ids: [ada.id] }] }, mine);
    expect(codes(out)).toEqual(['projects.invalid_company_id', 'projects.invalid_contact_ids', 'created']);
    expect(out.results[2]!.record).toMatchObject({ name: 'P3', contact_ids: [ada.id], status: 'open' });
  });
});

describe('batch-update', () => {
  it('partial updates per item: updated, unchanged, not_found, invalid_id, duplicates, rules', async () => {
    const auth = newAccount();
    const theirs = newAccount();
    const [a, b] = (await ok<Results>('contacts-batch-create', { items: [{ first_name: 'Ada', tags: ['x'] }, { first_name: 'Bob' }] }, auth)).results.map((r) => r.record!);
    const foreign = await ok<Rec>('contacts-create', { first_name: 'Theirs' }, theirs);
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const out = await ok<Results>(
      'contacts-batch-update',
      {
        items: [
          { id: a!.id, last_name: 'Lovelace', company_id: co.id },
          { id: b!.id, first_name: 'Bob' },
          { id: randomUUID(), first_name: 'Nobody' },
          { id: 'nope', first_name: 'X' },
          { id: a!.id.toUpperCase(), last_name: 'Again' },
          { id: b!.id, first_name: '  ' },
          { id: foreign.id, first_name: 'Mine now?' },
          { first_name: 'No id' },
          { id: randomUUID(), created_at: 'x' },
        ],
      },
      auth,
    );
    expect(codes(out)).toEqual([
      'updated',
      'unchanged',
      'contacts.not_found',
      'contacts.invalid_id',
      'contacts.duplicate_in_batch',
      'contacts.duplicate_in_batch',
      'contacts.not_found',
      'contacts.invalid_request',
      'contacts.invalid_request',
    ]);
    expect(out.results[0]!.record).toMatchObject({ id: a!.id, first_name: 'Ada', last_name: 'Lovelace', tags: ['x'], company_name: 'Acme' });
    expect(out.results[0]!.record!.updated_at).not.toBe(a!.updated_at);
    expect(out.results[1]!.record).toEqual(b);
    expect(await ok<Rec>('contacts-get', { id: foreign.id }, theirs)).toEqual(foreign);
  });

  it('keeps optimistic locking: concurrent updates of different fields of one record both survive', async () => {
    const auth = newAccount();
    const ids = (await ok<Results>('companies-batch-create', { items: Array.from({ length: 20 }, (_, i) => ({ name: `C${i}` })) }, auth)).results.map((r) => r.record!.id);
    await Promise.all([
      ok('companies-batch-update', { items: ids.map((id) => ({ id, industry: 'Engines' })) }, auth),
      ...ids.map((id) => ok('companies-update', { id, tags: ['t'] }, auth)),
    ]);
    const got = await ok<{ items: Rec[]; not_found: string[] }>('companies-batch-get', { ids }, auth);
    expect(got.items.every((c) => c.industry === 'Engines' && (c.tags as string[])[0] === 't')).toBe(true);
  });

  it('activities keep their type-specific rules', async () => {
    const auth = newAccount();
    const [task, note] = (await ok<Results>('activities-batch-create', { items: [{ type: 'task', subject: 'Do' }, { type: 'note', body: 'hi' }, { subject: 'no type' }] }, auth)).results.map((r) => r.record);
    const out = await ok<Results>('activities-batch-update', { items: [{ id: task!.id, completed: true }, { id: note!.id, completed: true }, { id: note!.id, type: 'call' }] }, auth);
    expect(codes(out)).toEqual(['updated', 'activities.invalid_request', 'activities.duplicate_in_batch']);
    expect(out.results[0]!.record!.completed_at).toEqual(expect.any(String));
  });
});

describe('batch-delete and batch-get', () => {
  it('deletes each id once; other accounts’ ids are not_found; get answers in input order', async () => {
    const auth = newAccount();
    const theirs = newAccount();
    const ids = (await ok<Results>('sources-batch-create', { items: [{ name: 'A' }, { name: 'B' }, { name: 'C' }] }, auth)).results.map((r) => r.record!.id);
    const foreign = (await ok<Rec>('sources-create', { name: 'Theirs' }, theirs)).id;
    const missing = randomUUID();
    const got = await ok<{ items: Rec[]; not_found: string[] }>('sources-batch-get', { ids: [ids[2], foreign, ids[0], missing, ids[2]!.toUpperCase(), ids[1]] }, auth);
    expect(got.items.map((s) => s.name)).toEqual(['C', 'A', 'B']);
    expect(got.not_found).toEqual([foreign, missing]);
    const bad = await invoke('sources-batch-get', { ids: [ids[0], 'nope'] }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'sources.invalid_id', details: [{ path: 'ids.1' }] });

    const out = await ok<Results>('sources-batch-delete', { ids: [ids[0], foreign, ids[0], 'nope', ids[1], missing] }, auth);
    expect(out.results).toEqual([
      { index: 0, ok: true, action: 'deleted' },
      expect.objectContaining({ index: 1, ok: false, error: expect.objectContaining({ code: 'sources.not_found' }) }),
      expect.objectContaining({ index: 2, ok: false, error: expect.objectContaining({ code: 'sources.duplicate_in_batch' }) }),
      expect.objectContaining({ index: 3, ok: false, error: expect.objectContaining({ code: 'sources.invalid_id' }) }),
      { index: 4, ok: true, action: 'deleted' },
      expect.objectContaining({ index: 5, ok: false, error: expect.objectContaining({ code: 'sources.not_found' }) }),
    ]);
    expect((await ok<{ items: Rec[] }>('sources-list', {}, auth)).items.map((s) => s.name)).toEqual(['C']);
    expect((await ok<{ items: Rec[] }>('sources-list', {}, theirs)).items).toHaveLength(1);
  });

  it('a deleted company is unlinked as by the single delete', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Gone' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id }, auth);
    expect(codes(await ok<Results>('companies-batch-delete', { ids: [co.id] }, auth))).toEqual(['deleted']);
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_id: null, company_name: '' });
  });
});

describe('batch-upsert', () => {
  it('matches contacts by email without case (several matches: the most recently created), else creates', async () => {
    const auth = newAccount();
    const older = await ok<Rec>('contacts-create', { first_name: 'Old', email: 'Ada@Example.com' }, auth);
    const newer = await ok<Rec>('contacts-create', { first_name: 'New', email: 'ada@example.com' }, auth);
    const same = await ok<Rec>('contacts-create', { first_name: 'Same', email: 'same@example.com', tags: ['a'] }, auth);
    const out = await ok<Results>(
      'contacts-batch-upsert',
      {
        items: [
          { email: 'ADA@example.COM', last_name: 'Lovelace' },
          { email: 'fresh@example.com', first_name: 'Fresh' },
          { email: 'fresh@EXAMPLE.com', first_name: 'Twice' },
          { first_name: 'No email' },
          { email: '  ', first_name: 'Blank' },
          { email: 'nobody@example.com' },
          { email: 'same@example.com', tags: ['a'] },
          { email: 'bad', first_name: 'Bad' },
          { email: 'x@example.com', first_name: 'X', id: randomUUID() },
        ],
      },
      auth,
    );
    expect(codes(out)).toEqual([
      'updated',
      'created',
      'contacts.duplicate_in_batch',
      'contacts.invalid_request',
      'contacts.invalid_request',
      'contacts.first_name_required',
      'unchanged',
      'contacts.invalid_request',
      'contacts.invalid_request',
    ]);
    // The newest match is updated; its stored spelling of the email stays.
    expect(out.results[0]!.record).toMatchObject({ id: newer.id, first_name: 'New', last_name: 'Lovelace', email: 'ada@example.com' });
    expect(await ok<Rec>('contacts-get', { id: older.id }, auth)).toEqual(older);
    expect(out.results[1]!.record).toMatchObject({ first_name: 'Fresh', email: 'fresh@example.com' });
    expect(out.results[6]!.record).toEqual(same);
    expect(out.results[3]!.error!.details).toEqual([{ path: 'email', message: expect.any(String) }]);
  });

  it('matches companies by domain; a second upsert of the same items updates nothing', async () => {
    const auth = newAccount();
    const acme = await ok<Rec>('companies-create', { name: 'Acme', domain: 'acme.example' }, auth);
    const items = [
      { domain: 'ACME.example', industry: 'Anvils' },
      { domain: 'new.example', name: 'New Co' },
    ];
    const first = await ok<Results>('companies-batch-upsert', { items }, auth);
    expect(codes(first)).toEqual(['updated', 'created']);
    expect(first.results[0]!.record).toMatchObject({ id: acme.id, name: 'Acme', domain: 'acme.example', industry: 'Anvils' });
    const second = await ok<Results>('companies-batch-upsert', { items }, auth);
    expect(codes(second)).toEqual(['unchanged', 'unchanged']);
    expect(second.results[1]!.record!.id).toBe(first.results[1]!.record!.id);
  });

  it('only the families with a lookup key (contacts, companies) have an upsert', () => {
    expect(ENTITIES.filter((e) => operationByName.has(`${e.family}-batch-upsert`)).map((e) => e.family).sort()).toEqual(['companies', 'contacts']);
  });
});

describe('Idempotency-Key on batch-create and batch-upsert', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('a retry returns the first answer and writes nothing; another body with the key is a conflict', async () => {
    for (const op of ['contacts-batch-create', 'contacts-batch-upsert']) {
      const key = randomUUID();
      const body = { items: [{ first_name: 'Idem', email: `${key}@example.com` }, { first_name: '' }] };
      const first = await server.call<Results>(op, body, { headers: { 'idempotency-key': key } });
      const second = await server.call<Results>(op, body, { headers: { 'idempotency-key': key } });
      expect(first.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(codes(first.body.result!)).toEqual(['created', op === 'contacts-batch-create' ? 'contacts.first_name_required' : 'contacts.invalid_request']);
      const conflict = await server.call(op, { items: [{ first_name: 'Other', email: 'o@example.com' }] }, { headers: { 'idempotency-key': key } });
      expect(conflict.status).toBe(409);
      expect(conflict.body.error!.code).toBe('contacts.conflict');
    }
    // One contact per key: the retries created nothing.
    const all = await server.call<{ items: Rec[] }>('contacts-list', { limit: 100 });
    expect(all.body.result!.items.filter((c) => c.first_name === 'Idem')).toHaveLength(2);
  });
});

describe('every family', () => {
  const bodies: Record<string, (auth: AuthContext) => Promise<Record<string, unknown>>> = {
    contacts: async () => ({ first_name: 'A' }),
    companies: async () => ({ name: 'A' }),
    sources: async () => ({ name: 'A' }),
    projects: async () => ({ name: 'A', status: 'completed' }),
    activities: async () => ({ type: 'call', duration_seconds: 5 }),
  };
  it.each(ENTITIES.map((e) => e.family))('%s: create, get, update, delete', async (family) => {
    const auth = newAccount();
    const body = await bodies[family]!(auth);
    const created = await ok<Results>(`${family}-batch-create`, { items: [body, body] }, auth);
    const ids = created.results.map((r) => r.record!.id);
    expect(codes(created)).toEqual(['created', 'created']);
    const got = await ok<{ items: Rec[] }>(`${family}-batch-get`, { ids }, auth);
    expect(got.items).toEqual(created.results.map((r) => r.record));
    const change = { contacts: { last_name: 'B' }, companies: { industry: 'B' }, sources: { name: 'B' }, projects: { stage: 'B' }, activities: { subject: 'B' } }[family]!;
    const updated = await ok<Results>(`${family}-batch-update`, { items: ids.map((id) => ({ id, ...change })) }, auth);
    expect(codes(updated)).toEqual(['updated', 'updated']);
    expect(updated.results.every((r) => r.record!.updated_at !== r.record!.created_at && Object.entries(change).every(([k, v]) => r.record![k] === v))).toBe(true);
    expect(codes(await ok<Results>(`${family}-batch-delete`, { ids }, auth))).toEqual(['deleted', 'deleted']);
    expect((await ok<{ not_found: string[] }>(`${family}-batch-get`, { ids }, auth)).not_found).toEqual(ids);
  });
});
