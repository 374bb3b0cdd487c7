/**
 * `npm run place-sorted-entries` (docs/deploy.md, "Upgrading a stack deployed before owners and
 * assignees"): records written before `owner_id` / `assignee_id` joined their family's sorted
 * fields (contract §17) have no entry in those partitions, so `owner_id: "none"` and a filter on
 * the field miss them; the upgrade places the missing entries, in the list's order, idempotently;
 * a record updated or deleted between the scan and the re-read keeps only its right entry;
 * trashed records get none. Two accounts.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/db/client.js';
import { placeSortedEntries } from '../../shared/db/sorted-index.js';
import { type EntityType, keys } from '../../shared/db/table.js';
import { newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string; created_at: string };
type Auth = ReturnType<typeof newAccount>;
interface Page { items: Rec[]; next_cursor: string }

/** The entries of one sorted field's partition. */
async function entries(accountId: string, type: EntityType, field: string): Promise<Record<string, unknown>[]> {
  const pk = keys.sortedPartition(accountId, type, field);
  return (await db().send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': pk } }))).Items ?? [];
}

/** As a version before the field was sorted wrote them: no entry of the field at all. Returns how many it removed. */
async function forget(accountId: string, type: EntityType, field: string): Promise<number> {
  const found = await entries(accountId, type, field);
  for (const e of found) await db().send(new DeleteCommand({ TableName: tableName(), Key: { pk: e.pk, sk: e.sk } }));
  return found.length;
}

/** Every page of a list (pages of `limit`). */
async function walk(op: string, body: Record<string, unknown>, auth: Auth, limit = 3): Promise<Rec[]> {
  const items: Rec[] = [];
  let cursor = '';
  for (let i = 0; i < 100; i++) {
    const page = await ok<Page>(op, { ...body, limit, ...(cursor ? { cursor } : {}) }, auth);
    items.push(...page.items);
    cursor = page.next_cursor;
    if (!cursor) return items;
  }
  throw new Error('too many pages');
}
const newestFirst = (rs: Rec[]) => [...rs].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((r) => r.id);
const idsOf = (rs: Rec[]) => rs.map((r) => r.id);

interface Account {
  auth: Auth;
  owner: string;
  contacts: Rec[];
  activities: Rec[];
  company: Rec;
  project: Rec;
  /** Trashed before the upgrade: no record item, no entry. */
  trashed: Rec;
}

async function seed(): Promise<Account> {
  const auth = newAccount();
  const owner = (await ok<{ id: string }>('members-create', { email: `m-${randomUUID()}@example.com`, name: 'Grace' }, auth)).id;
  const contacts = (await ok<{ results: Array<{ record: Rec }> }>('contacts-batch-create', { items: Array.from({ length: 9 }, (_, i) => ({ first_name: `C${i}`, owner_id: i % 3 === 0 ? owner : null })) }, auth)).results.map((r) => r.record);
  const activities: Rec[] = [];
  for (let i = 0; i < 4; i++) activities.push(await ok<Rec>('activities-create', { type: 'task', subject: `A${i}`, ...(i === 0 ? { assignee_id: owner } : {}) }, auth));
  const company = await ok<Rec>('companies-create', { name: 'Free' }, auth);
  const project = await ok<Rec>('projects-create', { name: 'Free' }, auth);
  const trashed = await ok<Rec>('contacts-create', { first_name: 'Trashed' }, auth);
  await ok('contacts-delete', { id: trashed.id }, auth);
  return { auth, owner, contacts, activities, company, project, trashed };
}

const FORGOTTEN: Array<[EntityType, string]> = [
  ['contact', 'owner_id'],
  ['company', 'owner_id'],
  ['project', 'owner_id'],
  ['activity', 'assignee_id'],
];

describe('npm run place-sorted-entries (the entries of fields that joined `sorted` after a record was written)', () => {
  it('places the missing entries of both accounts, in the list order; a record updated or deleted meanwhile keeps only its right entry; idempotent', async () => {
    const [a, b] = [await seed(), await seed()];
    let removed = 0;
    for (const acct of [a, b]) for (const [type, field] of FORGOTTEN) removed += await forget(acct.auth.accountId, type, field);
    // 9 contacts, 4 activities, a company and a project per account (the trashed contact has none)
    expect(removed).toBe(2 * (9 + 4 + 1 + 1));

    // Before: the lists that read those entries miss every record.
    for (const acct of [a, b]) {
      expect(await walk('contacts-list', { owner_id: 'none' }, acct.auth)).toEqual([]);
      expect(await walk('contacts-list', { filter: { field: 'owner_id', op: 'not_exists' } }, acct.auth)).toEqual([]);
      expect(await walk('activities-list', { assignee_id: 'none' }, acct.auth)).toEqual([]);
      expect(await walk('companies-list', { owner_id: 'none' }, acct.auth)).toEqual([]);
      expect(await walk('projects-list', { owner_id: 'none' }, acct.auth)).toEqual([]);
    }

    // Between the puts and the re-read: account a's first unowned contact gets an owner and its
    // second is deleted. Each write removes the entry the upgrade put; putting it back is the
    // interleaving where the write ran between the scan and the put (its removal found nothing,
    // the put then wrote the entry of the value the scan read).
    const unowned = a.contacts.filter((c) => c.owner_id === null);
    const [updated, deleted] = [unowned[0]!, unowned[1]!];
    let hooked = 0;
    const first = await placeSortedEntries({
      table: tableName(),
      segments: 1,
      beforeReread: async (placed) => {
        hooked++;
        const stale = placed.filter((p) => p.accountId === a.auth.accountId && p.type === 'contact' && p.field === 'owner_id' && [updated.id, deleted.id].includes(p.id));
        expect(stale).toHaveLength(2);
        await ok('contacts-update', { id: updated.id, owner_id: a.owner }, a.auth);
        await ok('contacts-delete', { id: deleted.id }, a.auth);
        for (const p of stale) await db().send(new PutCommand({ TableName: tableName(), Item: p.item }));
      },
    });
    expect(hooked).toBe(1);
    expect(first.placed).toBe(removed);
    expect(first.scanned).toBeGreaterThan(0);

    // After: every list holds its records, newest first, in full pages.
    for (const acct of [a, b]) {
      const live = acct.contacts.filter((c) => c.id !== deleted.id);
      const none = live.filter((c) => (c.id === updated.id ? false : c.owner_id === null));
      expect(idsOf(await walk('contacts-list', { owner_id: 'none' }, acct.auth))).toEqual(newestFirst(none));
      expect(idsOf(await walk('contacts-list', { filter: { field: 'owner_id', op: 'not_exists' } }, acct.auth))).toEqual(newestFirst(none));
      const owned = live.filter((c) => c.id === updated.id || c.owner_id === acct.owner);
      expect(idsOf(await walk('contacts-list', { filter: { field: 'owner_id', op: 'eq', value: acct.owner } }, acct.auth))).toEqual(newestFirst(owned));
      expect(idsOf(await walk('activities-list', { assignee_id: 'none' }, acct.auth))).toEqual(newestFirst(acct.activities.slice(1)));
      expect(idsOf(await walk('activities-list', { filter: { field: 'assignee_id', op: 'exists' } }, acct.auth))).toEqual([acct.activities[0]!.id]);
      expect(idsOf(await walk('companies-list', { owner_id: 'none' }, acct.auth))).toEqual([acct.company.id]);
      expect(idsOf(await walk('projects-list', { owner_id: 'none' }, acct.auth))).toEqual([acct.project.id]);
      // one entry per live record; none of a trashed one
      const ids = (await entries(acct.auth.accountId, 'contact', 'owner_id')).map((e) => e.id);
      expect([...ids].sort()).toEqual(live.map((c) => c.id).sort());
      expect(ids).not.toContain(acct.trashed.id);
    }
    // The updated record keeps only the entry of its owner, the deleted one none.
    const ownerEntries = await entries(a.auth.accountId, 'contact', 'owner_id');
    const mine = ownerEntries.filter((e) => e.id === updated.id);
    expect(mine).toHaveLength(1);
    expect(String(mine[0]!.sk).startsWith(keys.sortedValuesFrom)).toBe(true);
    expect(ownerEntries.filter((e) => e.id === deleted.id)).toEqual([]);

    // Idempotent: nothing left to place.
    const again = await placeSortedEntries({ table: tableName(), segments: 2, beforeReread: async () => expect.fail('nothing to re-read') });
    expect(again.placed).toBe(0);

    // A record trashed before the upgrade comes back with its entries.
    await ok('contacts-restore', { id: a.trashed.id }, a.auth);
    expect(idsOf(await walk('contacts-list', { owner_id: 'none' }, a.auth, 100))).toContain(a.trashed.id);
  }, 120_000);
});
