/**
 * Owners and assignees (contract §20): `owner_id` / `owner_name` on contacts, companies and
 * projects, `assignee_id` / `assignee_name` on activities, written by every path (create, update,
 * batches, upserts, imports by `owner_email`), an active member of the account or null; a
 * deactivated member stays the owner it is; the list filter (an id or `"none"`) and §17 filters
 * with full pages; a member's rename shown at once and written by the stream's fan-out; merges,
 * exports; two accounts.
 */
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { type LocalExports, startLocalExports } from '../../local/exports.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { getRecord } from '../../shared/db/items.js';
import { readMeta } from '../../shared/db/meta.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { startTestStream } from '../helpers/stream.js';

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
interface Page { items: Rec[]; next_cursor: string }
interface Member { id: string; name: string; email: string; status: string }
interface Job extends Rec { status: string; error_count: number; created_count: number; updated_count: number; download_url: string | null }

const member = (auth: Auth, name = 'Grace Hopper', email = `m-${randomUUID()}@example.com`) => ok<Member>('members-create', { email, name }, auth);
const error = async (op: string, body: unknown, auth: Auth) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: r.body.error?.details ?? [] };
};

/** Every page of a list, with the page sizes. */
async function walk(op: string, body: Record<string, unknown>, auth: Auth): Promise<{ items: Rec[]; sizes: number[] }> {
  const items: Rec[] = [];
  const sizes: number[] = [];
  let cursor = '';
  for (let i = 0; i < 100; i++) {
    const page = await ok<Page>(op, { ...body, ...(cursor ? { cursor } : {}) }, auth);
    items.push(...page.items);
    sizes.push(page.items.length);
    cursor = page.next_cursor;
    if (!cursor) return { items, sizes };
  }
  throw new Error('too many pages');
}
const ids = (rs: Rec[]) => rs.map((r) => r.id).sort();
const newestFirst = (a: Rec, b: Rec) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : String(a.created_at) < String(b.created_at) ? 1 : -1);

async function waitFor<T extends { status: string }>(op: string, id: string, auth: Auth): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await ok<T>(op, { id }, auth);
    if (['completed', 'failed', 'canceled'].includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`${op} ${id} still ${r.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

let worker: StreamPoller;
let queue: LocalQueue;
let imports: LocalImports;
let exportsLocal: LocalExports;
beforeAll(async () => {
  queue = await startLocalQueue('crm-webhook-deliveries');
  // The record changes' path as `npm start` runs it, on this file's queue server.
  worker = await startTestStream({ awsEndpoint: queue.endpoint });
  imports = await startLocalImports(queue.endpoint, { visibilityTimeoutSeconds: 1 });
  exportsLocal = await startLocalExports(queue.endpoint, { visibilityTimeoutSeconds: 1 });
});
afterAll(async () => {
  await exportsLocal?.stop();
  await imports?.stop();
  await queue?.stop();
  await worker?.stop();
});

describe('owners and assignees', () => {
  it('creates and updates records with an owner (its name shown), and takes null to unown', async () => {
    const auth = newAccount();
    const [grace, alan] = [await member(auth, 'Grace Hopper'), await member(auth, 'Alan Turing')];
    const unowned = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    expect(unowned).toMatchObject({ owner_id: null, owner_name: '' });
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', owner_id: grace.id.toUpperCase() }, auth);
    expect(c).toMatchObject({ owner_id: grace.id, owner_name: 'Grace Hopper' });
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ owner_id: grace.id, owner_name: 'Grace Hopper' });
    expect(await ok<Rec>('contacts-update', { id: c.id, owner_id: alan.id }, auth)).toMatchObject({ owner_id: alan.id, owner_name: 'Alan Turing' });
    expect(await ok<Rec>('contacts-update', { id: c.id, owner_id: null }, auth)).toMatchObject({ owner_id: null, owner_name: '' });
    const co = await ok<Rec>('companies-create', { name: 'Acme', owner_id: grace.id }, auth);
    expect(co).toMatchObject({ owner_id: grace.id, owner_name: 'Grace Hopper' });
    const p = await ok<Rec>('projects-create', { name: 'Engine', owner_id: alan.id }, auth);
    expect(p).toMatchObject({ owner_id: alan.id, owner_name: 'Alan Turing' });
    const a = await ok<Rec>('activities-create', { type: 'task', subject: 'Call back', assignee_id: grace.id }, auth);
    expect(a).toMatchObject({ assignee_id: grace.id, assignee_name: 'Grace Hopper' });
    expect(await ok<Rec>('activities-update', { id: a.id, assignee_id: alan.id }, auth)).toMatchObject({ assignee_id: alan.id, assignee_name: 'Alan Turing' });
    // read-only names
    expect(await error('contacts-update', { id: c.id, owner_name: 'X' }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_request', details: [{ path: 'owner_name' }] });
    expect(await error('activities-create', { type: 'note', assignee_name: 'X' }, auth)).toMatchObject({ status: 400, code: 'activities.invalid_request' });
  });

  it('refuses an unknown, foreign or deactivated member (<family>.invalid_owner_id, details), writing nothing; a deactivated owner stays', async () => {
    const auth = newAccount();
    const other = newAccount();
    const [grace, gone] = [await member(auth, 'Grace'), await member(auth, 'Gone')];
    const foreign = await member(other, 'Foreign');
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', owner_id: gone.id }, auth);
    const d = await ok<Rec>('contacts-create', { first_name: 'Di' }, auth);
    await ok('members-deactivate', { id: gone.id }, auth);
    for (const [bad, message] of [[randomUUID(), 'no such member'], [foreign.id, 'no such member'], [gone.id, 'is a deactivated member'], ['nope', 'is not a UUID']] as const) {
      expect(await error('contacts-create', { first_name: 'Bad', owner_id: bad }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_owner_id', details: [{ path: 'owner_id', message }] });
      expect(await error('companies-create', { name: 'Bad', owner_id: bad }, auth)).toMatchObject({ status: 400, code: 'companies.invalid_owner_id' });
      expect(await error('projects-create', { name: 'Bad', owner_id: bad }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_owner_id' });
      expect(await error('activities-create', { type: 'note', assignee_id: bad }, auth)).toMatchObject({ status: 400, code: 'activities.invalid_assignee_id', details: [{ path: 'assignee_id' }] });
      expect(await error('contacts-update', { id: d.id, last_name: 'Changed', owner_id: bad }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_owner_id' });
    }
    for (const op of ['contacts-list', 'companies-list', 'projects-list', 'activities-list']) {
      const left = (await ok<Page>(op, {}, auth)).items;
      expect(left.map((r) => r.id)).toEqual(op === 'contacts-list' ? [d.id, c.id] : []);
    }
    // the deactivated owner stays: on reads, on an update that does not send it, or sends it unchanged
    expect(await ok<Rec>('contacts-get', { id: d.id }, auth)).toMatchObject({ last_name: '', owner_id: null });
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ last_name: '', owner_id: gone.id, owner_name: 'Gone' });
    expect(await ok<Rec>('contacts-update', { id: c.id, last_name: 'Lovelace' }, auth)).toMatchObject({ last_name: 'Lovelace', owner_id: gone.id, owner_name: 'Gone' });
    expect(await ok<Rec>('contacts-update', { id: c.id, owner_id: gone.id, city: 'London' }, auth)).toMatchObject({ city: 'London', owner_id: gone.id });
    // a reactivated member may own again; a member of another account never
    await ok('members-reactivate', { id: gone.id }, auth);
    expect(await ok<Rec>('companies-create', { name: 'Back', owner_id: gone.id }, auth)).toMatchObject({ owner_id: gone.id });
    expect(await ok<Rec>('contacts-update', { id: c.id, owner_id: grace.id }, auth)).toMatchObject({ owner_id: grace.id });
    expect(await error('contacts-create', { first_name: 'X', owner_id: grace.id }, other)).toMatchObject({ code: 'contacts.invalid_owner_id' });
    expect(await error('contacts-get', { id: c.id }, other)).toMatchObject({ status: 404 });
  });

  it('lists by owner_id (an id, or "none") and by §17 filters on owner_id, in full pages', async () => {
    const auth = newAccount();
    const [grace, alan] = [await member(auth, 'Grace'), await member(auth, 'Alan')];
    const owners = [grace.id, alan.id, null];
    const made: Rec[] = (await ok<{ results: Array<{ record: Rec }> }>('contacts-batch-create', { items: Array.from({ length: 45 }, (_, i) => ({ first_name: `C${i}`, owner_id: owners[i % 3] })) }, auth)).results.map((r) => r.record);
    const of = (o: string | null) => made.filter((r) => r.owner_id === o);
    const expectFull = (sizes: number[], n: number, limit: number) => {
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      sizes.slice(0, -1).forEach((s) => expect(s).toBe(limit));
    };
    for (const [filter, want] of [[grace.id, of(grace.id)], ['none', of(null)], [randomUUID(), []]] as const) {
      const walked = await walk('contacts-list', { owner_id: filter, limit: 4 }, auth);
      expect(ids(walked.items)).toEqual(ids(want as Rec[]));
      expectFull(walked.sizes, want.length, 4);
      // newest first, as every list
      expect(walked.items.map((r) => r.id)).toEqual([...(want as Rec[])].sort(newestFirst).map((r) => r.id));
    }
    for (const [filter, want] of [
      [{ field: 'owner_id', op: 'eq', value: alan.id }, of(alan.id)],
      [{ field: 'owner_id', op: 'in', value: [alan.id, grace.id] }, [...of(alan.id), ...of(grace.id)]],
      [{ field: 'owner_id', op: 'not_exists' }, of(null)],
      [{ field: 'owner_name', op: 'eq', value: 'grace' }, of(grace.id)],
    ] as const) {
      const walked = await walk('contacts-list', { filter, limit: 4 }, auth);
      expect(ids(walked.items)).toEqual(ids(want as Rec[]));
      expectFull(walked.sizes, want.length, 4);
    }
    // a changed owner moves between the lists at once
    await ok('contacts-update', { id: of(null)[0]!.id, owner_id: grace.id }, auth);
    expect((await walk('contacts-list', { owner_id: 'none', limit: 100 }, auth)).items).toHaveLength(14);
    expect((await walk('contacts-list', { owner_id: grace.id, limit: 100 }, auth)).items).toHaveLength(16);
    // the other families and activities' assignee_id
    const co = await ok<Rec>('companies-create', { name: 'Owned', owner_id: alan.id }, auth);
    await ok('companies-create', { name: 'Free' }, auth);
    expect((await ok<Page>('companies-list', { owner_id: alan.id }, auth)).items.map((r) => r.id)).toEqual([co.id]);
    const pr = await ok<Rec>('projects-create', { name: 'Free' }, auth);
    expect((await ok<Page>('projects-list', { owner_id: 'none' }, auth)).items.map((r) => r.id)).toEqual([pr.id]);
    const act = await ok<Rec>('activities-create', { type: 'task', assignee_id: grace.id }, auth);
    await ok('activities-create', { type: 'note' }, auth);
    expect((await ok<Page>('activities-list', { assignee_id: grace.id }, auth)).items.map((r) => r.id)).toEqual([act.id]);
    expect((await ok<Page>('activities-list', { assignee_id: 'none' }, auth)).items).toHaveLength(1);
    // bad values
    expect(await error('contacts-list', { owner_id: 'nobody' }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_request', details: [{ path: 'owner_id' }] });
    expect(await error('contacts-list', { sort: { field: 'owner_id', direction: 'asc' } }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_sort' });
    // sorted by owner name (a computed name: an in-memory sort)
    const sorted = await walk('contacts-list', { filter: { field: 'owner_id', op: 'exists' }, sort: { field: 'owner_name', direction: 'asc' }, limit: 10 }, auth);
    expect(sorted.items.map((r) => r.owner_name)).toEqual([...Array(15).fill('Alan'), ...Array(16).fill('Grace')]);
  });

  it('reads a page of one owner\'s records in proportion to the page, not to the account (at most 16 RCU, the same at two sizes)', async () => {
    const auth = newAccount();
    const members = await Promise.all(Array.from({ length: 5 }, (_, i) => member(auth, `Owner ${i}`)));
    const reads: Array<{ rcu: number; items: number }> = [];
    let made = 0;
    for (const size of [150, 450]) {
      for (; made < size; made += 50) {
        const items = Array.from({ length: 50 }, (_, k) => ({ first_name: `P${made + k}`, email: `p${made + k}@example.com`, city: 'London', owner_id: members[(made + k) % 5]!.id }));
        await ok('contacts-batch-create', { items }, auth);
      }
      const { result, usage } = await measureCapacity(() => ok<Page>('contacts-list', { owner_id: members[2]!.id, limit: 25 }, auth));
      expect(result.items).toHaveLength(25);
      expect(result.items.every((r) => r.owner_id === members[2]!.id)).toBe(true);
      expect(usage.rcu).toBeLessThanOrEqual(16);
      reads.push({ rcu: usage.rcu, items: usage.itemsRead });
    }
    expect(reads[1]).toEqual(reads[0]);
  }, 120_000);

  it('shows a member\'s rename at once, and the stream writes it into the records', async () => {
    const auth = newAccount();
    const m = await member(auth, 'Grace Brewster');
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', owner_id: m.id }, auth);
    const a = await ok<Rec>('activities-create', { type: 'call', assignee_id: m.id }, auth);
    await worker.drain();
    await ok('members-update', { id: m.id, name: 'Grace Hopper' }, auth);
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ owner_name: 'Grace Hopper' });
    expect((await ok<Page>('contacts-list', { owner_id: m.id }, auth)).items[0]).toMatchObject({ owner_name: 'Grace Hopper' });
    expect(await ok<Rec>('activities-get', { id: a.id }, auth)).toMatchObject({ assignee_name: 'Grace Hopper' });
    await worker.drain();
    expect((await getRecord('contact', auth.accountId, c.id))?.owner_name).toBe('Grace Hopper');
    expect((await getRecord('activity', auth.accountId, a.id))?.assignee_name).toBe('Grace Hopper');
    expect((await readMeta(auth.accountId)).overrides.size).toBe(0);
    // an email change or a deactivation is no rename: the names stay, the owner too
    await ok('members-update', { id: m.id, email: `new-${randomUUID()}@example.com` }, auth);
    await ok('members-deactivate', { id: m.id }, auth);
    await worker.drain();
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ owner_id: m.id, owner_name: 'Grace Hopper' });
  });

  it('batches and upserts write owners; an invalid one fails its item only', async () => {
    const auth = newAccount();
    const [grace, gone] = [await member(auth, 'Grace'), await member(auth, 'Gone')];
    await ok('members-deactivate', { id: gone.id }, auth);
    const created = await ok<{ results: Array<{ ok: boolean; record?: Rec; error?: { code: string } }> }>(
      'contacts-batch-create',
      { items: [{ first_name: 'A', owner_id: grace.id }, { first_name: 'B', owner_id: gone.id }, { first_name: 'C', owner_id: randomUUID() }, { first_name: 'D' }] },
      auth,
    );
    expect(created.results.map((r) => r.ok)).toEqual([true, false, false, true]);
    expect(created.results[0]!.record).toMatchObject({ owner_id: grace.id, owner_name: 'Grace' });
    expect(created.results[1]!.error!.code).toBe('contacts.invalid_owner_id');
    const d = created.results[3]!.record!;
    const updated = await ok<{ results: Array<{ ok: boolean; record?: Rec }> }>('contacts-batch-update', { items: [{ id: d.id, owner_id: grace.id }] }, auth);
    expect(updated.results[0]!.record).toMatchObject({ owner_id: grace.id, owner_name: 'Grace' });
    const upserted = await ok<{ results: Array<{ ok: boolean; action?: string; record?: Rec; error?: { code: string } }> }>(
      'companies-batch-upsert',
      { items: [{ name: 'Acme', domain: 'acme.example', owner_id: grace.id }, { name: 'Bad', domain: 'bad.example', owner_id: gone.id }] },
      auth,
    );
    expect(upserted.results[0]).toMatchObject({ ok: true, action: 'created', record: { owner_id: grace.id, owner_name: 'Grace' } });
    expect(upserted.results[1]).toMatchObject({ ok: false, error: { code: 'companies.invalid_owner_id' } });
    const again = await ok<{ results: Array<{ action?: string; record?: Rec }> }>('companies-batch-upsert', { items: [{ name: 'Acme', domain: 'ACME.example', owner_id: null }] }, auth);
    expect(again.results[0]).toMatchObject({ action: 'updated', record: { owner_id: null, owner_name: '' } });
    const acts = await ok<{ results: Array<{ ok: boolean; record?: Rec; error?: { code: string } }> }>('activities-batch-create', { items: [{ type: 'note', assignee_id: grace.id }, { type: 'note', assignee_id: gone.id }] }, auth);
    expect(acts.results[0]!.record).toMatchObject({ assignee_id: grace.id, assignee_name: 'Grace' });
    expect(acts.results[1]!.error!.code).toBe('activities.invalid_assignee_id');
  });

  it('merges keep the primary\'s owner, else take the secondary\'s (a deactivated one as well)', async () => {
    const auth = newAccount();
    const [grace, alan] = [await member(auth, 'Grace'), await member(auth, 'Alan')];
    const p1 = await ok<Rec>('contacts-create', { first_name: 'P', owner_id: grace.id }, auth);
    const s1 = await ok<Rec>('contacts-create', { first_name: 'S', owner_id: alan.id }, auth);
    expect(await ok<Rec>('contacts-merge', { primary_id: p1.id, secondary_id: s1.id }, auth)).toMatchObject({ owner_id: grace.id, owner_name: 'Grace' });
    const p2 = await ok<Rec>('companies-create', { name: 'P' }, auth);
    const s2 = await ok<Rec>('companies-create', { name: 'S', owner_id: alan.id }, auth);
    await ok('members-deactivate', { id: alan.id }, auth);
    expect(await ok<Rec>('companies-merge', { primary_id: p2.id, secondary_id: s2.id }, auth)).toMatchObject({ owner_id: alan.id, owner_name: 'Alan' });
    // trash and restore keep it
    await ok('companies-delete', { id: p2.id }, auth);
    expect(await ok<Rec>('companies-restore', { id: p2.id }, auth)).toMatchObject({ owner_id: alan.id, owner_name: 'Alan' });
  });

  it('imports name owners by owner_email (case-insensitively); an unknown or deactivated one is that row\'s error; exports carry owner_id and owner_name', async () => {
    const auth = newAccount();
    const grace = await member(auth, 'Grace', 'grace@example.com');
    const gone = await member(auth, 'Gone', 'gone@example.com');
    await ok('members-deactivate', { id: gone.id }, auth);
    const csv = ['First Name,Email,Owner Email', 'Ada,ada@example.com,GRACE@Example.com', 'Bob,bob@example.com,nobody@example.com', 'Cy,cy@example.com,gone@example.com', 'Di,di@example.com,'].join('\n');
    const started = await ok<Job>('imports-create', { object_type: 'contacts', csv }, auth);
    const done = await waitFor<Job>('imports-get', started.id, auth);
    expect(done).toMatchObject({ status: 'completed', created_count: 2, error_count: 2 });
    const errors = (await ok<{ items: Array<Record<string, unknown>> }>('imports-errors', { import_id: started.id }, auth)).items;
    expect(errors.map((e) => [e.row_number, e.column, e.code, e.value])).toEqual([
      [3, 'Owner Email', 'invalid_value', 'nobody@example.com'],
      [4, 'Owner Email', 'invalid_value', 'gone@example.com'],
    ]);
    const contacts = (await ok<Page>('contacts-list', {}, auth)).items;
    expect(contacts.map((c) => [c.first_name, c.owner_id, c.owner_name]).sort()).toEqual([
      ['Ada', grace.id, 'Grace'],
      ['Di', null, ''],
    ]);

    const exported = await ok<Job>('exports-create', { object_type: 'contacts', filters: { owner_id: grace.id } }, auth);
    const file = await waitFor<Job>('exports-get', exported.id, auth);
    expect(file.status).toBe('completed');
    const rows = parse(Buffer.from(await (await fetch(file.download_url!)).arrayBuffer()), { bom: true }) as string[][];
    const [header, ...cells] = rows;
    expect(header).toEqual(expect.arrayContaining(['owner_id', 'owner_name']));
    expect(cells).toHaveLength(1);
    const row = Object.fromEntries(header!.map((h, i) => [h, cells[0]![i]]));
    expect(row).toMatchObject({ first_name: 'Ada', owner_id: grace.id, owner_name: 'Grace' });

    // the exported file re-imports unchanged (owner_name is ignored, not unmapped)
    const back = await ok<Job & { unmapped_columns: string[] }>('imports-create', { object_type: 'contacts', csv: rows.map((r) => r.map((c) => `"${c.replace(/"/g, '""')}"`).join(',')).join('\n') }, auth);
    const reimported = await waitFor<Job & { unmapped_columns: string[] }>('imports-get', back.id, auth);
    expect(reimported).toMatchObject({ status: 'completed', error_count: 0, updated_count: 1, unmapped_columns: [] });
  });
});
