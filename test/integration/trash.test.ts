/**
 * Trash, restore and trash-list (contract §15): deletion moves the four record families to the
 * trash, restore brings a record back and undoes the cascades nothing changed since, trash-list
 * pages the trash most recently deleted first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { issueToken } from '../../shared/auth/tokens.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { invoke, newAccount, ok, startServer, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };
type TrashItem = { family: string; record: Rec; deleted_at: string; purge_at: string };
type TrashPage = { items: TrashItem[]; next_cursor: string };
type Auth = ReturnType<typeof newAccount>;

let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
});
afterAll(async () => {
  await worker?.stop();
});

async function expectError(op: string, body: unknown, auth: Auth, code: string) {
  const r = await invoke(op, body, auth);
  expect(r.body.error?.code, JSON.stringify(r.body)).toBe(code);
  return r;
}

async function allTrash(auth: Auth, body: Record<string, unknown> = {}, limit = 2): Promise<TrashItem[]> {
  const out: TrashItem[] = [];
  let cursor = '';
  do {
    const p = await ok<TrashPage>('trash-list', { ...body, limit, ...(cursor ? { cursor } : {}) }, auth);
    expect(p.items.length === limit || p.next_cursor === '').toBe(true);
    out.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor);
  return out;
}

describe('delete moves to the trash', () => {
  it.each([
    ['contacts', { first_name: 'Ada' }, 'search', 'Ada'],
    ['companies', { name: 'Acme' }, 'search', 'Acme'],
    ['projects', { name: 'Engine' }, 'search', 'Engine'],
    ['activities', { type: 'note', subject: 'hi' }, undefined, undefined],
  ])('a trashed %s is not_found to get, update, delete, lists and search', async (family, body, filter, value) => {
    const auth = newAccount();
    const r = await ok<Rec>(`${family}-create`, body, auth);
    await worker.drain();
    expect(await ok(`${family}-delete`, { id: r.id }, auth)).toEqual({ deleted: true });
    await worker.drain();
    await expectError(`${family}-get`, { id: r.id }, auth, `${family}.not_found`);
    await expectError(`${family}-update`, { id: r.id, ...(family === 'activities' ? { subject: 'x' } : { tags: ['x'] }) }, auth, `${family}.not_found`);
    await expectError(`${family}-delete`, { id: r.id }, auth, `${family}.not_found`);
    expect((await ok<{ items: Rec[] }>(`${family}-list`, {}, auth)).items).toEqual([]);
    if (filter) expect((await ok<{ items: Rec[] }>(`${family}-list`, { [filter]: value }, auth)).items).toEqual([]);
    expect((await ok<{ items: Rec[]; not_found: string[] }>(`${family}-batch-get`, { ids: [r.id] }, auth)).not_found).toEqual([r.id]);
    const [item] = (await ok<TrashPage>('trash-list', {}, auth)).items;
    expect(item).toMatchObject({ family, record: r });
    const deletedAt = Date.parse(item!.deleted_at);
    expect(Date.parse(item!.purge_at) - deletedAt).toBe(30 * 86_400_000);
  });

  it('lead sources are deleted for good (no trash)', async () => {
    const auth = newAccount();
    const s = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    await ok('sources-delete', { id: s.id }, auth);
    expect((await ok<TrashPage>('trash-list', {}, auth)).items).toEqual([]);
    expect((await invoke('sources-get', { id: s.id }, auth)).status).toBe(404);
  });

  it('batch delete shares the path: its records are in the trash and restorable', async () => {
    const auth = newAccount();
    const { results } = await ok<{ results: Array<{ record: Rec }> }>('contacts-batch-create', { items: [{ first_name: 'A' }, { first_name: 'B' }] }, auth);
    const ids = results.map((x) => x.record.id);
    await ok('contacts-batch-delete', { ids }, auth);
    expect((await allTrash(auth)).map((t) => t.record.id).sort()).toEqual([...ids].sort());
    const back = await ok<Rec>('contacts-restore', { id: ids[0] }, auth);
    expect(back).toMatchObject({ id: ids[0], first_name: results[0]!.record.first_name });
  });
});

describe('retention', () => {
  it('a record past TRASH_RETENTION_DAYS is purged: gone from trash-list, restore is not_found', async () => {
    const auth = newAccount();
    const kept = await ok<Rec>('contacts-create', { first_name: 'Kept' }, auth);
    await ok('contacts-delete', { id: kept.id }, auth);
    process.env.TRASH_RETENTION_DAYS = String(1 / 86_400); // one second
    try {
      const c = await ok<Rec>('contacts-create', { first_name: 'Short' }, auth);
      await ok('contacts-delete', { id: c.id }, auth);
      const [item] = (await ok<TrashPage>('trash-list', { limit: 1 }, auth)).items;
      expect(item!.record.id).toBe(c.id);
      expect(Date.parse(item!.purge_at) - Date.parse(item!.deleted_at)).toBe(1000);
      // DynamoDB Local has no TTL: readers treat an item past its purge time as gone (AWS may lag a day or two).
      for (const deadline = Date.now() + 5_000; (await ok<TrashPage>('trash-list', {}, auth)).items.length > 1; ) {
        if (Date.now() > deadline) throw new Error('still in the trash');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await ok<TrashPage>('trash-list', {}, auth)).items.map((t) => t.record.id)).toEqual([kept.id]);
      await expectError('contacts-restore', { id: c.id }, auth, 'contacts.not_found');
    } finally {
      delete process.env.TRASH_RETENTION_DAYS;
    }
  });
});

describe('restore', () => {
  it('brings the record back with its id, fields and created_at; a second restore is not_found', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const src = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', tags: ['vip'], company_id: co.id, source_id: src.id }, auth);
    await ok('contacts-delete', { id: ada.id }, auth);
    const back = await ok<Rec>('contacts-restore', { id: ada.id }, auth);
    const { updated_at: _u, ...same } = ada;
    expect(back).toMatchObject(same);
    expect(String(back.updated_at) >= String(ada.updated_at)).toBe(true);
    expect(await ok('contacts-get', { id: ada.id }, auth)).toEqual(back);
    await worker.drain();
    expect((await ok<{ items: Rec[] }>('contacts-list', { search: 'lovel' }, auth)).items.map((x) => x.id)).toEqual([ada.id]);
    expect((await ok<{ items: Rec[] }>('contacts-list', { tags: ['vip'], company_id: co.id }, auth)).items.map((x) => x.id)).toEqual([ada.id]);
    expect((await ok<TrashPage>('trash-list', {}, auth)).items).toEqual([]);
    await expectError('contacts-restore', { id: ada.id }, auth, 'contacts.not_found');
  });

  it('restores an activity with 100 contacts (more index entries than one transaction holds)', async () => {
    const auth = newAccount();
    const { results } = await ok<{ results: Array<{ record: Rec }> }>('contacts-batch-create', { items: Array.from({ length: 100 }, (_, i) => ({ first_name: `C${i}` })) }, auth);
    const ids = results.map((r) => r.record.id);
    const act = await ok<Rec>('activities-create', { type: 'call', contact_ids: ids }, auth);
    await ok('activities-delete', { id: act.id }, auth);
    const back = await ok<Rec>('activities-restore', { id: act.id }, auth);
    expect(back.contact_ids).toEqual(ids);
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: ids[99] }, auth)).items.map((x) => x.id)).toEqual([act.id]);
  });

  it('drops links to records that are gone', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const src = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    const a = await ok<Rec>('contacts-create', { first_name: 'A' }, auth);
    const b = await ok<Rec>('contacts-create', { first_name: 'B' }, auth);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id, source_id: src.id }, auth);
    const act = await ok<Rec>('activities-create', { type: 'call', contact_ids: [a.id, b.id], company_id: co.id }, auth);
    await ok('contacts-delete', { id: ada.id }, auth);
    await ok('activities-delete', { id: act.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await ok('sources-delete', { id: src.id }, auth);
    await ok('contacts-delete', { id: b.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('contacts-restore', { id: ada.id }, auth)).toMatchObject({ company_id: null, company_name: '', source_id: null, source_name: '' });
    expect(await ok<Rec>('activities-restore', { id: act.id }, auth)).toMatchObject({ contact_ids: [a.id], company_id: null });
  });

  it('undoes a company deletion\'s cascade where nothing changed it since', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const other = await ok<Rec>('companies-create', { name: 'Other' }, auth);
    const c1 = await ok<Rec>('contacts-create', { first_name: 'C1', company_id: co.id }, auth);
    const c2 = await ok<Rec>('contacts-create', { first_name: 'C2', company_id: co.id }, auth);
    const c3 = await ok<Rec>('contacts-create', { first_name: 'C3', company_id: co.id }, auth);
    const p = await ok<Rec>('projects-create', { name: 'P', company_id: co.id }, auth);
    const act = await ok<Rec>('activities-create', { type: 'note', company_id: co.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await worker.drain();
    for (const id of [c1.id, c2.id, c3.id]) expect(await ok<Rec>('contacts-get', { id }, auth)).toMatchObject({ company_id: null, company_name: '' });
    // Changed since the cascade: c2 linked elsewhere (left there); c3's other fields only (re-linked).
    await ok('contacts-update', { id: c2.id, company_id: other.id }, auth);
    await ok('contacts-update', { id: c3.id, job_title: 'CTO' }, auth);
    await ok('companies-restore', { id: co.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: co.id, company_name: 'Acme' });
    expect(await ok<Rec>('contacts-get', { id: c2.id }, auth)).toMatchObject({ company_id: other.id, company_name: 'Other' });
    expect(await ok<Rec>('contacts-get', { id: c3.id }, auth)).toMatchObject({ company_id: co.id, company_name: 'Acme', job_title: 'CTO' });
    expect(await ok<Rec>('projects-get', { id: p.id }, auth)).toMatchObject({ company_id: co.id, company_name: 'Acme' });
    expect(await ok<Rec>('activities-get', { id: act.id }, auth)).toMatchObject({ company_id: co.id });
    expect((await ok<{ items: Rec[] }>('contacts-list', { company_id: co.id }, auth)).items.map((x) => x.id).sort()).toEqual([c1.id, c3.id].sort());
    expect((await ok<{ items: Rec[] }>('contacts-list', { search: 'acme' }, auth)).items.map((x) => x.id).sort()).toEqual([c1.id, c3.id].sort());
  });

  it('puts a restored contact back in the contact_ids it was removed from (same place), unless they changed since', async () => {
    const auth = newAccount();
    const a = await ok<Rec>('contacts-create', { first_name: 'A' }, auth);
    const b = await ok<Rec>('contacts-create', { first_name: 'B' }, auth);
    const x = await ok<Rec>('contacts-create', { first_name: 'X' }, auth);
    const act1 = await ok<Rec>('activities-create', { type: 'call', contact_ids: [a.id, x.id, b.id] }, auth);
    const act2 = await ok<Rec>('activities-create', { type: 'call', contact_ids: [x.id, a.id] }, auth);
    const p = await ok<Rec>('projects-create', { name: 'P', contact_ids: [x.id] }, auth);
    await ok('contacts-delete', { id: x.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('activities-get', { id: act1.id }, auth)).toMatchObject({ contact_ids: [a.id, b.id] });
    await ok('activities-update', { id: act2.id, contact_ids: [] }, auth); // changed since: stays as it is
    await ok('contacts-restore', { id: x.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('activities-get', { id: act1.id }, auth)).toMatchObject({ contact_ids: [a.id, x.id, b.id] });
    expect(await ok<Rec>('activities-get', { id: act2.id }, auth)).toMatchObject({ contact_ids: [] });
    expect(await ok<Rec>('projects-get', { id: p.id }, auth)).toMatchObject({ contact_ids: [x.id] });
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: x.id }, auth)).items.map((i) => i.id)).toEqual([act1.id]);
  });

  it('a second deletion and restore undoes only its own cascade', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const c1 = await ok<Rec>('contacts-create', { first_name: 'C1', company_id: co.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await worker.drain();
    await ok('companies-restore', { id: co.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: co.id });
    await ok('contacts-update', { id: c1.id, company_id: null }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await worker.drain();
    await ok('companies-restore', { id: co.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: null });
  });

  it('restore right after delete (before the cascade ran) keeps every link', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const c1 = await ok<Rec>('contacts-create', { first_name: 'C1', company_id: co.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: null, company_name: '' });
    await ok('companies-restore', { id: co.id }, auth);
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: co.id, company_name: 'Acme' });
    await worker.drain();
    expect(await ok<Rec>('contacts-get', { id: c1.id }, auth)).toMatchObject({ company_id: co.id, company_name: 'Acme' });
  });

  it('answers not_found for a record never trashed, another account\'s, and bad ids', async () => {
    const auth = newAccount();
    const other = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'A' }, auth);
    await expectError('contacts-restore', { id: c.id }, auth, 'contacts.not_found');
    await ok('contacts-delete', { id: c.id }, auth);
    await expectError('contacts-restore', { id: c.id }, other, 'contacts.not_found');
    expect((await ok<TrashPage>('trash-list', {}, other)).items).toEqual([]);
    await expectError('contacts-restore', { id: 'nope' }, auth, 'contacts.invalid_id');
    await expectError('contacts-restore', {}, auth, 'contacts.invalid_request');
    await expectError('contacts-restore', { id: c.id, x: 1 }, auth, 'contacts.invalid_request');
    await expectError('projects-restore', { id: c.id }, auth, 'projects.not_found');
  });
});

describe('trash-list', () => {
  it('pages the trash most recently deleted first, filtered by family', async () => {
    const auth = newAccount();
    const deleted: Array<[string, string]> = [];
    for (const [family, body] of [
      ['contacts', { first_name: 'A' }],
      ['companies', { name: 'B' }],
      ['projects', { name: 'C' }],
      ['activities', { type: 'note' }],
      ['contacts', { first_name: 'D' }],
    ] as const) {
      const r = await ok<Rec>(`${family}-create`, body, auth);
      await ok(`${family}-delete`, { id: r.id }, auth);
      deleted.push([family, r.id]);
    }
    const all = await allTrash(auth);
    expect(all.map((t) => [t.family, t.record.id])).toEqual([...deleted].reverse());
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.deleted_at >= all[i]!.deleted_at).toBe(true);
    const contacts = await allTrash(auth, { family: 'contacts' }, 1);
    expect(contacts.map((t) => t.record.id)).toEqual(deleted.filter(([f]) => f === 'contacts').map(([, id]) => id).reverse());
    const full = await ok<TrashPage>('trash-list', { limit: 5 }, auth);
    expect(full.items).toHaveLength(5);
    expect(full.next_cursor).toBe('');
  });

  it('rejects bad bodies and foreign cursors', async () => {
    const auth = newAccount();
    for (let i = 0; i < 3; i++) {
      const r = await ok<Rec>('contacts-create', { first_name: `N${i}` }, auth);
      await ok('contacts-delete', { id: r.id }, auth);
    }
    const page = await ok<TrashPage>('trash-list', { limit: 1 }, auth);
    await expectError('trash-list', { family: 'sources' }, auth, 'trash.invalid_request');
    await expectError('trash-list', { limit: 0 }, auth, 'trash.invalid_request');
    await expectError('trash-list', { other: 1 }, auth, 'trash.invalid_request');
    await expectError('trash-list', { cursor: page.next_cursor, family: 'contacts' }, auth, 'trash.invalid_cursor');
    await expectError('trash-list', { cursor: page.next_cursor }, newAccount(), 'trash.invalid_cursor');
    await expectError('trash-list', { cursor: 'x.y' }, auth, 'trash.invalid_cursor');
  });

  it('reads in proportion to the page, whatever the size of the trash', async () => {
    const auth = newAccount();
    for (const [family, body] of [['contacts', { first_name: 'X' }], ['companies', { name: 'X' }], ['projects', { name: 'X' }], ['activities', { type: 'note' }]] as const) {
      const created = await ok<{ results: Array<{ record: Rec }> }>(`${family}-batch-create`, { items: Array.from({ length: 30 }, () => body) }, auth);
      await ok(`${family}-batch-delete`, { ids: created.results.map((r) => r.record.id) }, auth);
    }
    const pageOf = async (body: Record<string, unknown>) => measureCapacity(() => ok<TrashPage>('trash-list', { limit: 10, ...body }, auth));
    const all = await pageOf({});
    expect(all.result.items).toHaveLength(10);
    expect(all.usage.itemsRead).toBeLessThanOrEqual(4 * 11 + 1); // the pages of the four partitions, and the account's META
    const contacts = await pageOf({ family: 'contacts' });
    expect(contacts.usage.itemsRead).toBeLessThanOrEqual(11 + 1);
    const next = await pageOf({ cursor: all.result.next_cursor });
    expect(next.usage.itemsRead).toBeLessThanOrEqual(4 * 11 + 1); // the pages of the four partitions, and the account's META
    console.log(`trash-list of 120 trashed records (three pages per family), page of 10: ${all.usage.itemsRead} items / ${all.usage.rcu} RCU (all families), ${contacts.usage.itemsRead} items / ${contacts.usage.rcu} RCU (one family)`);
  });
});

describe('events and scopes of the trash', () => {
  it('raises contact.restored (body as *.created) into the change log with the caller as actor; re-links as system', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'C', company_id: co.id }, auth);
    await worker.drain();
    await ok('companies-delete', { id: co.id }, auth);
    await worker.drain();
    const restored = await ok<Rec>('companies-restore', { id: co.id }, auth);
    await worker.drain();
    type Event = { event: string; record_id: string; data: Rec; actor: { type: string; id: string | null }; previous_attributes?: Record<string, unknown> };
    const log = await ok<{ items: Event[] }>('events-list', { types: ['company.restored'] }, auth);
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({ event: 'company.restored', record_id: co.id, data: restored, actor: { type: 'api_key' } });
    expect(log.items[0]!.previous_attributes).toBeUndefined();
    const history = await ok<{ items: Event[] }>('events-list', { record_id: c.id }, auth);
    expect(history.items.map((e) => [e.event, e.actor.type, e.data.company_id])).toEqual([
      ['contact.created', 'api_key', co.id],
      ['contact.updated', 'system', null],
      ['contact.updated', 'system', co.id],
    ]);
  });

  it('trash-list needs trash:read; a restore needs its family\'s write scope', async () => {
    const server = await startServer();
    try {
      const auth = server.auth;
      const c = await ok<Rec>('contacts-create', { first_name: 'S' }, auth);
      await ok('contacts-delete', { id: c.id }, auth);
      const trashReader = await issueToken(auth, { scopes: ['trash:read'] });
      const contactsWriter = await issueToken(auth, { scopes: ['contacts:write'] });
      expect((await server.call('trash-list', {}, { token: trashReader })).status).toBe(200);
      expect((await server.call('trash-list', {}, { token: contactsWriter })).status).toBe(403);
      const denied = await server.call('contacts-restore', { id: c.id }, { token: trashReader });
      expect(denied.status).toBe(403);
      expect(JSON.stringify(denied.body)).toContain('contacts:write');
      expect((await server.call('contacts-merge', { primary_id: c.id, secondary_id: c.id }, { token: trashReader })).status).toBe(403);
      expect((await server.call('contacts-restore', { id: c.id }, { token: contactsWriter })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
