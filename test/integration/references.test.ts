import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { getRecord } from '../../shared/db/items.js';
import { readMeta } from '../../shared/db/meta.js';
import { newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };
type Page = { items: Rec[]; next_cursor: string };

describe('computed company and source names', () => {
  it('shows a rename on every read at once, before the stream worker runs', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const src = await ok<Rec>('sources-create', { name: 'Web' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id, source_id: src.id, tags: ['t'] }, auth);
    await ok('companies-update', { id: co.id, name: 'Acme Industries' }, auth);
    await ok('sources-update', { id: src.id, name: 'Website' }, auth);
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_name: 'Acme Industries', source_name: 'Website' });
    for (const body of [{}, { tags: ['t'] }, { company_id: co.id }, { source_ids: [src.id] }]) {
      expect((await ok<Page>('contacts-list', body, auth)).items[0]).toMatchObject({ id: c.id, company_name: 'Acme Industries', source_name: 'Website' });
    }
  });

  it('unlinks contacts of a deleted company or source at once', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Gone Inc' }, auth);
    const src = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id, source_id: src.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await ok('sources-delete', { id: src.id }, auth);
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_id: null, company_name: '', source_id: null, source_name: '' });
    expect((await ok<Page>('contacts-list', { company_id: co.id }, auth)).items).toEqual([]);
    expect((await ok<Page>('contacts-list', { source_ids: [src.id] }, auth)).items).toEqual([]);
    expect((await ok<Page>('contacts-list', { search: 'gone' }, auth)).items).toEqual([]);
  });

  describe('with the stream worker', () => {
    let worker: StreamPoller;
    beforeAll(async () => {
      worker = await startTestStreamWorker();
    });
    afterAll(async () => {
      await worker.stop();
    });

    it('rewrites stored names and search entries, then clears the override', async () => {
      const auth = newAccount();
      const co = await ok<Rec>('companies-create', { name: 'Oldname' }, auth);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await ok<Rec>('contacts-create', { first_name: `P${i}`, company_id: co.id }, auth)).id);
      await ok('companies-update', { id: co.id, name: 'Brandnew Holdings' }, auth);
      await worker.drain();
      for (const id of ids) expect((await getRecord('contact', auth.accountId, id))?.company_name).toBe('Brandnew Holdings');
      expect((await readMeta(auth.accountId)).overrides.size).toBe(0);
      expect((await ok<Page>('contacts-list', { search: 'brandnew hold' }, auth)).items.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect((await ok<Page>('contacts-list', { search: 'oldname' }, auth)).items).toEqual([]);
    });

    it('unlinks the stored contacts of a deleted company', async () => {
      const auth = newAccount();
      const co = await ok<Rec>('companies-create', { name: 'Shortlived' }, auth);
      const c = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id }, auth);
      await ok('companies-delete', { id: co.id }, auth);
      await worker.drain();
      const stored = await getRecord('contact', auth.accountId, c.id);
      expect(stored).toMatchObject({ company_id: null, company_name: '' });
      expect(stored?.idx.some((n: string) => n.startsWith('c#'))).toBe(false);
      expect((await readMeta(auth.accountId)).overrides.size).toBe(0);
    });
  });
});
