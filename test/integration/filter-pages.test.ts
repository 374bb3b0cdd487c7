/**
 * Contract §17 (amended): an `eq` or `in` condition on an indexed field serves full pages in the
 * default order (newest first) at a cost that does not grow with the account: each value's
 * sort-ordered entries are keyed value → created_at → id, so they are read in the list's own
 * order. A broad `eq` (half of the account) used to give short pages (2–3 matches a page).
 */
import { describe, expect, it } from 'vitest';
import { measureCapacity } from '../../shared/db/capacity.js';
import { newAccount, ok } from '../helpers/api.js';

type Rec = { id: string; created_at: string; first_name: string };
type Page = { items: Rec[]; next_cursor: string };

const auth = newAccount();
const NAMES = ['Common', 'Rare', 'Other', 'Else'];

/** 600 contacts: every other one `Common`, the rest spread over three names, in creation order. */
async function seed(): Promise<Rec[]> {
  const all: Rec[] = [];
  for (let call = 0; call < 6; call++) {
    const items = Array.from({ length: 100 }, (_, i) => {
      const n = call * 100 + i;
      return { first_name: n % 2 === 0 ? 'Common' : NAMES[1 + (n % 3)]!, last_name: `P${n}` };
    });
    const { results } = await ok<{ results: Array<{ ok: boolean; record: Rec }> }>('contacts-batch-create', { items }, auth);
    all.push(...results.map((r) => r.record));
  }
  return all;
}

const newestFirst = (a: Rec, b: Rec) => (`${a.created_at}#${a.id}` < `${b.created_at}#${b.id}` ? 1 : -1);

describe('full pages for eq and in on an indexed field', () => {
  it('walks a broad eq and an in of 3 values in full pages, newest first, each page reading a bounded number of items', { timeout: 120_000 }, async () => {
    const all = await seed();
    for (const [filter, names] of [
      [{ field: 'first_name', op: 'eq', value: 'common' }, ['Common']],
      [{ field: 'first_name', op: 'in', value: ['Rare', 'Other', 'ELSE'] }, ['Rare', 'Other', 'Else']],
    ] as const) {
      const expected = all.filter((r) => (names as readonly string[]).includes(r.first_name)).sort(newestFirst).map((r) => r.id);
      const limit = 25;
      const got: string[] = [];
      let cursor: string | undefined;
      const reads: number[] = [];
      do {
        const { result: page, usage } = await measureCapacity(() => ok<Page>('contacts-list', { filter, limit, ...(cursor ? { cursor } : {}) }, auth));
        reads.push(usage.itemsRead);
        got.push(...page.items.map((r) => r.id));
        if (page.next_cursor) expect(page.items, `a page of ${JSON.stringify(filter)} before the last`).toHaveLength(limit);
        cursor = page.next_cursor || undefined;
      } while (cursor);
      expect(got).toEqual(expected);
      // Each value's entries of the page and the page's records (and the cursor's one more), a few meta and token reads: not the account's 600.
      expect(Math.max(...reads), `items read per page: ${reads.join(' ')}`).toBeLessThanOrEqual((limit + 1) * (names.length + 1) + 20);
    }
  });
});

describe('npm run rekey-sorted-entries (the upgrade of entries keyed by an earlier version)', () => {
  it('moves entries keyed value → id to value → created_at → id, idempotently, and the list reads them', async () => {
    const { DeleteCommand, PutCommand, QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const { db, tableName } = await import('../../shared/db/client.js');
    const { keys } = await import('../../shared/db/table.js');
    const { rekeySortedEntries } = await import('../../shared/db/sorted-index.js');
    const own = newAccount();
    const made: Rec[] = [];
    for (let i = 0; i < 3; i++) made.push(await ok<Rec>('contacts-create', { first_name: 'Legacy', last_name: `L${i}` }, own));
    const pk = keys.sortedPartition(own.accountId, 'contact', 'first_name');
    const entries = async () => (await db().send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': pk } }))).Items ?? [];
    // As an earlier version wrote them: the value, then the id.
    for (const e of await entries()) {
      const sk = String(e.sk);
      const old = `${sk.slice(0, sk.indexOf('\u0001') + 1)}${String(e.id)}`;
      await db().send(new PutCommand({ TableName: tableName(), Item: { ...e, sk: old } }));
      await db().send(new DeleteCommand({ TableName: tableName(), Key: { pk, sk } }));
    }
    expect((await entries()).every((e) => String(e.sk).endsWith(String(e.id)) && !String(e.sk).includes('#'))).toBe(true);
    const first = await rekeySortedEntries({ table: tableName(), segments: 2 });
    expect(first.rekeyed).toBeGreaterThanOrEqual(3);
    const after = await entries();
    expect(after.map((e) => String(e.sk)).sort()).toEqual(made.map((r) => `${String(after[0]!.sk).slice(0, String(after[0]!.sk).indexOf('\u0001') + 1)}${r.created_at}#${r.id}`).sort());
    expect((await rekeySortedEntries({ table: tableName(), segments: 2 })).rekeyed).toBe(0);
    const page = await ok<Page>('contacts-list', { filter: { field: 'first_name', op: 'eq', value: 'Legacy' } }, own);
    expect(page.items.map((r) => r.id)).toEqual([...made].sort(newestFirst).map((r) => r.id));
  });
});
