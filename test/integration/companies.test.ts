import { describe, expect, it } from 'vitest';
import { invoke, newAccount, ok } from '../helpers/api.js';

describe('companies', () => {
  it('creates a company with every field defaulted and reads it back', async () => {
    const auth = newAccount();
    const created = await ok<Record<string, unknown>>('companies-create', { name: '  Acme  ', domain: 'acme.com', tags: ['b', 'a', 'b'] }, auth);
    expect(created).toMatchObject({ name: 'Acme', domain: 'acme.com', tags: ['b', 'a'], employee_count: null, annual_revenue: null, notes: '', custom_fields: {} });
    expect(created.account_id).toBe(auth.accountId);
    expect(created.created_by).toBe(auth.userId);
    expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const got = await ok('companies-get', { id: created.id }, auth);
    expect(got).toEqual(created);
  });

  it('is not_found for another account', async () => {
    const a = newAccount();
    const b = newAccount();
    const created = await ok<{ id: string }>('companies-create', { name: 'Acme' }, a);
    for (const op of ['companies-get', 'companies-delete']) {
      const r = await invoke(op, { id: created.id }, b);
      expect(r.status).toBe(404);
      expect(r.body.error?.code).toBe('companies.not_found');
    }
    const u = await invoke('companies-update', { id: created.id, name: 'x' }, b);
    expect(u.body.error?.code).toBe('companies.not_found');
  });
});
