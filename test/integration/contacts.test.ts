import { describe, expect, it } from 'vitest';
import { invoke, newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };

describe('contacts', () => {
  it('creates a contact with every field of the resource and the computed names', async () => {
    const auth = newAccount();
    const company = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const source = await ok<Rec>('sources-create', { name: 'Referral' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: ' Ada ', last_name: 'Lovelace', email: 'ada@acme.com', company_id: company.id.toUpperCase(), source_id: source.id, tags: ['vip'] }, auth);
    expect(Object.keys(c)).toEqual([
      'id', 'account_id', 'created_by', 'first_name', 'last_name', 'email', 'phone', 'company_id', 'company_name', 'job_title', 'address', 'city', 'state',
      'zip_code', 'country', 'notes', 'owner_id', 'owner_name', 'tags', 'source_id', 'source_name', 'custom_fields', 'created_at', 'updated_at',
    ]);
    expect(c).toMatchObject({ first_name: 'Ada', company_id: company.id, company_name: 'Acme', source_id: source.id, source_name: 'Referral', phone: '', tags: ['vip'] });
    expect(c.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ok('contacts-get', { id: c.id }, auth)).toEqual(c);
  });

  it.each([
    [{}, 'contacts.first_name_required'],
    [{ first_name: '   ' }, 'contacts.first_name_required'],
    [{ first_name: 'a'.repeat(201) }, 'contacts.invalid_request'],
    [{ first_name: 5 }, 'contacts.invalid_request'],
    [{ first_name: 'A', email: 'nope' }, 'contacts.invalid_request'],
    [{ first_name: 'A', tags: 'vip' }, 'contacts.invalid_request'],
    [{ first_name: 'A', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'contacts.invalid_request'],
    [{ first_name: 'A', notes: 'x'.repeat(10_001) }, 'contacts.invalid_request'],
    [{ first_name: 'A', city: 'x'.repeat(501) }, 'contacts.invalid_request'],
    [{ first_name: 'A', company_name: 'X' }, 'contacts.invalid_request'],
    [{ first_name: 'A', id: '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f' }, 'contacts.invalid_request'],
    [{ first_name: 'A', favourite_color: 'blue' }, 'contacts.invalid_request'],
    [{ first_name: 'A', company_id: 'not-a-uuid' }, 'contacts.invalid_company_id'],
    [{ first_name: 'A', company_id: '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f' }, 'contacts.invalid_company_id'],
    [{ first_name: 'A', source_id: '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f' }, 'contacts.invalid_source_id'],
    [{ first_name: 'A', custom_fields: { '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f': 'x' } }, 'contacts.invalid_custom_fields'],
  ])('rejects %j with %s and writes nothing', async (body, code) => {
    const auth = newAccount();
    const r = await invoke('contacts-create', body, auth);
    expect(r.status).toBe(400);
    expect(r.body.ok).toBe(false);
    expect(r.body.error?.code).toBe(code);
    expect(r.body.error?.message).not.toMatch(/at .*\.ts|Error:/);
    const list = await ok<{ items: unknown[] }>('contacts-list', {}, auth);
    expect(list.items).toHaveLength(0);
  });

  it('names the failing path in details', async () => {
    const r = await invoke('contacts-create', { first_name: 'A', email: 'bad', employee_count: 1 }, newAccount());
    expect(r.body.error?.details).toEqual([{ path: 'employee_count', message: 'unknown field' }]);
    const r2 = await invoke('contacts-create', { first_name: 'A', email: 'bad' }, newAccount());
    expect(r2.body.error?.details?.[0]?.path).toBe('email');
  });

  it('updates partially, moves updated_at only on change, and rejects bad ids', async () => {
    const auth = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', last_name: 'L', tags: ['a', 'b'] }, auth);
    await new Promise((r) => setTimeout(r, 5));
    const same = await ok<Rec>('contacts-update', { id: c.id, last_name: 'L' }, auth);
    expect(same.updated_at).toBe(c.updated_at);
    const u = await ok<Rec>('contacts-update', { id: c.id, job_title: 'CTO', tags: ['c'] }, auth);
    expect(u).toMatchObject({ first_name: 'Ada', last_name: 'L', job_title: 'CTO', tags: ['c'] });
    expect(String(u.updated_at) > String(c.updated_at)).toBe(true);
    expect((await invoke('contacts-update', { id: 'nope', first_name: 'x' }, auth)).body.error?.code).toBe('contacts.invalid_id');
    expect((await invoke('contacts-update', { first_name: 'x' }, auth)).body.error?.code).toBe('contacts.invalid_request');
    expect((await invoke('contacts-update', { id: c.id, first_name: '' }, auth)).body.error?.code).toBe('contacts.first_name_required');
    expect((await invoke('contacts-update', { id: c.id, first_name: null }, auth)).body.error?.code).toBe('contacts.first_name_required');
    expect((await invoke('contacts-get', { id: 'x' }, auth)).body.error?.code).toBe('contacts.invalid_id');
    expect((await invoke('contacts-get', {}, auth)).body.error?.code).toBe('contacts.invalid_request');
  });

  it('keeps both of two concurrent updates of different fields', async () => {
    const auth = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    const fields = ['last_name', 'job_title', 'city', 'country', 'notes', 'phone'];
    await Promise.all(fields.map((f) => ok('contacts-update', { id: c.id, [f]: `v-${f}` }, auth)));
    const got = await ok<Rec>('contacts-get', { id: c.id }, auth);
    for (const f of fields) expect(got[f]).toBe(`v-${f}`);
  });

  it('isolates accounts: another account sees not_found and its lists stay empty', async () => {
    const a = newAccount();
    const b = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', tags: ['vip'] }, a);
    for (const [op, body] of [['contacts-get', { id: c.id }], ['contacts-update', { id: c.id, last_name: 'x' }], ['contacts-delete', { id: c.id }]] as const) {
      const r = await invoke(op, body, b);
      expect(r.status).toBe(404);
      expect(r.body.error?.code).toBe('contacts.not_found');
    }
    expect((await ok<{ items: unknown[] }>('contacts-list', { tags: ['vip'] }, b)).items).toEqual([]);
    expect((await ok<{ items: unknown[] }>('contacts-list', { search: 'ada' }, b)).items).toEqual([]);
    const companyOfA = await ok<Rec>('companies-create', { name: 'A Corp' }, a);
    expect((await invoke('contacts-create', { first_name: 'X', company_id: companyOfA.id }, b)).body.error?.code).toBe('contacts.invalid_company_id');
    expect((await ok<Rec>('contacts-get', { id: c.id }, a)).first_name).toBe('Ada');
  });

  it('deletes: {deleted:true}, then not_found, and the record leaves every list', async () => {
    const auth = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', tags: ['vip'] }, auth);
    expect(await ok('contacts-delete', { id: c.id }, auth)).toEqual({ deleted: true });
    expect((await invoke('contacts-get', { id: c.id }, auth)).body.error?.code).toBe('contacts.not_found');
    expect((await invoke('contacts-delete', { id: c.id }, auth)).status).toBe(404);
    expect((await ok<{ items: unknown[] }>('contacts-list', { tags: ['vip'] }, auth)).items).toEqual([]);
    expect((await ok<{ items: unknown[] }>('contacts-list', { search: 'ada' }, auth)).items).toEqual([]);
  });
});
