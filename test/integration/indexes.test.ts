/**
 * `indexed` custom fields and sort-ordered entries (contract §17), against DynamoDB Local through
 * the handlers: a build of the existing records stopped mid-way and resumed after its lease ran
 * out (no entry missing, none twice), writes during the build, sort and conditions through the
 * field's entries compared with the contract's order (generated), read-your-writes through an
 * entry, `index_building`, the removal of the entries, and the limit of indexed fields.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { bindingEnv } from '../../shared/config/bindings.js';
import { db, tableName } from '../../shared/db/client.js';
import { listActiveIndexBuilds } from '../../shared/db/index-builds.js';
import { keys } from '../../shared/db/table.js';
import { positionKeyOf, sortedKeyOf } from '../../shared/db/record-model.js';
import { runIndexBuild } from '../../shared/indexing/worker.js';
import { familyOf } from '../../shared/domain/records/family.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { updateOptimistic } from '../../shared/domain/records/optimistic.js';

type Rec = Record<string, unknown> & { id: string; custom_fields: Record<string, unknown> };
type Page = { items: Rec[]; next_cursor: string };

let queue: LocalQueue;
beforeAll(async () => {
  // The definitions' operations queue builds; this file runs them itself (runIndexBuild).
  queue = await startLocalQueue('crm-index-builds');
  Object.assign(process.env, { [bindingEnv('indexBuildsQueue')]: queue.queueUrl, AWS_ENDPOINT_URL_SQS: queue.endpoint });
});
afterAll(() => queue?.stop());

async function walk(body: Record<string, unknown>, auth: ReturnType<typeof newAccount>, limit: number): Promise<Rec[][]> {
  const pages: Rec[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 500; i++) {
    const p = await ok<Page>('contacts-list', { ...body, limit, ...(cursor ? { cursor } : {}) }, auth);
    pages.push(p.items);
    if (!p.next_cursor) return pages;
    cursor = p.next_cursor;
  }
  throw new Error('too many pages');
}

/** The build queued for the account's field (the message's content), from the running builds' markers. */
async function buildOf(accountId: string): Promise<{ account_id: string; build_id: string }> {
  const found = (await listActiveIndexBuilds()).filter((m) => m.account_id === accountId);
  expect(found).toHaveLength(1);
  return { account_id: accountId, build_id: found[0]!.build_id };
}

/** The field's entries as stored: each record's id, once per entry. */
async function entryIds(accountId: string, fieldId: string): Promise<string[]> {
  return sortedIds(accountId, `custom_fields.${fieldId}`);
}

/** A sorted field's entries as stored: each record's id, once per entry. */
async function sortedIds(accountId: string, field: string): Promise<string[]> {
  const out = await db().send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': keys.sortedPartition(accountId, 'contact', field) } }));
  return (out.Items ?? []).map((i) => String(i.id));
}

const SCORES = [-7.5, -1, 0, 0.25, 3, 3, 42, 1e6];
/** Contract §17 order of a number field: values ascending (or descending), empty values last both ways, ties by id in the same direction. */
function expected(records: Rec[], fieldId: string, direction: 'asc' | 'desc'): string[] {
  const s = direction === 'asc' ? 1 : -1;
  const v = (r: Rec) => r.custom_fields[fieldId] as number | undefined;
  return [...records]
    .sort((a, b) => {
      const [x, y] = [v(a), v(b)];
      if ((x === undefined) !== (y === undefined)) return x === undefined ? 1 : -1;
      if (x !== undefined && y !== undefined && x !== y) return x < y ? -s : s;
      // Ties by list position: created_at, then id.
      return `${String(a.created_at)}#${a.id}` < `${String(b.created_at)}#${b.id}` ? -s : s;
    })
    .map((r) => r.id);
}

describe('indexed custom fields (contract §17)', () => {
  const auth = newAccount();
  let field = '';
  const records = new Map<string, Rec>();
  const all = () => [...records.values()];

  beforeAll(async () => {
    field = (await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'score', field_type: 'number' }, auth)).id;
    expect(field).toBeTruthy();
    for (let i = 0; i < 24; i++) {
      const r = await ok<Rec>('contacts-create', { first_name: `p${i}`, custom_fields: i % 5 === 4 ? {} : { [field]: SCORES[i % SCORES.length] } }, auth);
      records.set(r.id, r);
    }
  });

  it('builds the entries of existing records, resumes a build stopped mid-way, and keeps writes made meanwhile', async () => {
    const turned = await ok<Rec>('custom-fields-update', { id: field, indexed: true }, auth);
    expect(turned).toMatchObject({ indexed: true, index_status: 'building' });
    // While it builds: a sort on the field is refused, filters stay correct (the unindexed path).
    const refused = await invoke('contacts-list', { sort: { field: `custom_fields.${field}` } }, auth);
    expect(refused.status).toBe(409);
    expect((refused.body as unknown as { error: { code: string } }).error.code).toBe('contacts.index_building');
    const big = (await walk({ filter: { field: `custom_fields.${field}`, op: 'gt', value: 1 } }, auth, 5)).flat().map((r) => r.id).sort();
    expect(big).toEqual(all().filter((r) => (r.custom_fields[field] as number) > 1).map((r) => r.id).sort());

    // A worker dies after its second page (pages of 5 records): its lease (1 ms here) runs out.
    const message = await buildOf(auth.accountId);
    await expect(
      runIndexBuild(message, {
        pageSize: 5,
        leaseMs: 1,
        afterPage: (job) => {
          if (job.position === 2) throw new Error('worker died');
        },
      }),
    ).rejects.toThrow('worker died');
    expect((await entryIds(auth.accountId, field)).length).toBe(10);
    // Writes meanwhile keep the field's entries themselves: an update of a record already done, a new record.
    const first = all()[0]!;
    records.set(first.id, await ok<Rec>('contacts-update', { id: first.id, custom_fields: { [field]: -100 } }, auth));
    const late = await ok<Rec>('contacts-create', { first_name: 'late', custom_fields: { [field]: 7 } }, auth);
    records.set(late.id, late);

    const pages: number[] = [];
    expect(await runIndexBuild(message, { pageSize: 5, afterPage: (job) => void pages.push(job.position) })).toBe('completed');
    expect(pages[0]).toBe(3); // resumed after the last saved page
    const ids = await entryIds(auth.accountId, field);
    expect(ids.sort()).toEqual(all().map((r) => r.id).sort()); // every record once: none missing, none twice
    expect((await ok<Rec>('custom-fields-get', { id: field }, auth)).index_status).toBe('ready');

    for (const direction of ['asc', 'desc'] as const) {
      const walked = await walk({ sort: { field: `custom_fields.${field}`, direction } }, auth, 4);
      expect(walked.flat().map((r) => r.id)).toEqual(expected(all(), field, direction));
      walked.slice(0, -1).forEach((p) => expect(p).toHaveLength(4));
    }
  }, 60_000);

  it('sorts and filters through the entries as the contract orders them (generated), reflecting each write at once', async () => {
    const cf = `custom_fields.${field}`;
    const value = fc.constantFrom(...SCORES, -3, 5, 1e7);
    const cond = fc.oneof(
      value.map((v) => ({ field: cf, op: 'eq', value: v })),
      fc.uniqueArray(value, { minLength: 1, maxLength: 3 }).map((v) => ({ field: cf, op: 'in', value: v })),
      fc.tuple(fc.constantFrom('lt', 'lte', 'gt', 'gte'), value).map(([op, v]) => ({ field: cf, op, value: v })),
      fc.tuple(value, value).map((v) => ({ field: cf, op: 'between', value: v })),
    );
    const holds = (c: { op: string; value: unknown }, x: number | undefined) => {
      if (x === undefined) return false;
      const v = c.value as number & number[];
      return c.op === 'eq' ? x === v : c.op === 'in' ? v.includes(x) : c.op === 'lt' ? x < v : c.op === 'lte' ? x <= v : c.op === 'gt' ? x > v : c.op === 'gte' ? x >= v : x >= v[0]! && x <= v[1]!;
    };
    await fc.assert(
      fc.asyncProperty(fc.option(cond, { nil: undefined }), fc.option(fc.constantFrom('asc' as const, 'desc' as const), { nil: undefined }), fc.integer({ min: 2, max: 9 }), async (c, direction, limit) => {
        const body = { ...(c ? { filter: c } : {}), ...(direction ? { sort: { field: cf, direction } } : {}) };
        const got = (await walk(body, auth, limit)).flat().map((r) => r.id);
        const matching = all().filter((r) => !c || holds(c, r.custom_fields[field] as number | undefined));
        // Without a sort: the list's own order (newest first).
        const want = direction ? expected(matching, field, direction) : [...matching].sort((a, b) => (`${a.created_at}#${a.id}` < `${b.created_at}#${b.id}` ? 1 : -1)).map((r) => r.id);
        expect(got).toEqual(want);
      }),
      { numRuns: 15, seed: 31 },
    );
    // Read-your-writes through an entry: the next call sorts by the new value.
    const some = all()[3]!;
    records.set(some.id, await ok<Rec>('contacts-update', { id: some.id, custom_fields: { [field]: 1e9 } }, auth));
    expect((await ok<Page>('contacts-list', { sort: { field: cf, direction: 'desc' }, limit: 1 }, auth)).items[0]!.id).toBe(some.id);
    expect((await ok<Page>('contacts-list', { filter: { field: cf, op: 'eq', value: 1e9 } }, auth)).items.map((r) => r.id)).toEqual([some.id]);
    await ok('contacts-delete', { id: some.id }, auth);
    records.delete(some.id);
    expect((await ok<Page>('contacts-list', { filter: { field: cf, op: 'eq', value: 1e9 } }, auth)).items).toEqual([]);
    expect(await entryIds(auth.accountId, field)).not.toContain(some.id);
  }, 90_000);

  it('removes the entries when indexed is turned off; the field still sorts (in memory) and filters', async () => {
    expect(await ok<Rec>('custom-fields-update', { id: field, indexed: false }, auth)).toMatchObject({ indexed: false, index_status: 'building' });
    // A write after the change no longer keeps an entry of the field.
    const after = await ok<Rec>('contacts-create', { first_name: 'after', custom_fields: { [field]: 1 } }, auth);
    records.set(after.id, after);
    expect(await entryIds(auth.accountId, field)).not.toContain(after.id);
    expect(await runIndexBuild(await buildOf(auth.accountId), { pageSize: 7 })).toBe('completed');
    expect(await entryIds(auth.accountId, field)).toEqual([]);
    expect((await ok<Rec>('custom-fields-get', { id: field }, auth)).index_status).toBe('ready');
    const walked = (await walk({ sort: { field: `custom_fields.${field}`, direction: 'asc' } }, auth, 10)).flat().map((r) => r.id);
    expect(walked).toEqual(expected(all(), field, 'asc'));
  }, 60_000);

  it('allows at most 10 indexed custom fields per entity type', async () => {
    const own = newAccount();
    for (let i = 0; i < 10; i++) await ok('custom-fields-create', { entity_type: 'company', name: `f${i}`, field_type: 'text', indexed: true }, own);
    const r = await invoke('custom-fields-create', { entity_type: 'company', name: 'f10', field_type: 'text', indexed: true }, own);
    expect(r.status).toBe(400);
    expect((r.body as unknown as { error: { code: string } }).error.code).toBe('custom_fields.limit_exceeded');
    // Another entity type has its own 10.
    expect(await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'c', field_type: 'text', indexed: true }, own)).toMatchObject({ indexed: true, index_status: 'building' });
  }, 30_000);

  it('lets no two concurrent requests pass the limit together: creates and updates racing for the last two places', async () => {
    const own = newAccount();
    for (let i = 0; i < 8; i++) await ok('custom-fields-create', { entity_type: 'project', name: `p${i}`, field_type: 'number', indexed: true }, own);
    const plain: Rec[] = [];
    for (let i = 0; i < 3; i++) plain.push(await ok<Rec>('custom-fields-create', { entity_type: 'project', name: `q${i}`, field_type: 'number' }, own));
    // Each request reads 8 indexed fields before any of them writes: without the set's condition, all six pass.
    const racing = await Promise.all([
      ...[0, 1, 2].map((i) => invoke('custom-fields-create', { entity_type: 'project', name: `r${i}`, field_type: 'number', indexed: true }, own)),
      ...plain.map((p) => invoke('custom-fields-update', { id: p.id, indexed: true }, own)),
    ]);
    const codes = racing.map((r) => (r.status === 200 ? 'ok' : (r.body as unknown as { error: { code: string } }).error.code));
    expect(codes.filter((c) => c === 'ok'), codes.join(' ')).toHaveLength(2);
    expect(codes.filter((c) => c !== 'ok')).toEqual(Array(4).fill('custom_fields.limit_exceeded'));
    const listed = { data: (await ok<{ items: Rec[] }>('custom-fields-list', { entity_type: 'project' }, own)).items };
    expect(listed.data.filter((d) => d.indexed)).toHaveLength(10);
    // A refused create leaves no definition behind; a refused update leaves the field as it was.
    const names = listed.data.map((d) => String(d.name));
    const created = racing.slice(0, 3).filter((r) => r.status === 200).length;
    expect(names.filter((n) => n.startsWith('r'))).toHaveLength(created);
    expect(listed.data.filter((d) => String(d.name).startsWith('q') && d.indexed)).toHaveLength(2 - created);
    // Turning one off frees its place at once.
    const off = listed.data.find((d) => d.indexed)!;
    await ok('custom-fields-update', { id: off.id, indexed: false }, own);
    expect(await ok<Rec>('custom-fields-create', { entity_type: 'project', name: 'again', field_type: 'number', indexed: true }, own)).toMatchObject({ indexed: true });
  }, 60_000);
});

describe('updated_at entries (the write stamp, moved beside each write)', () => {
  it('keeps one entry per record under concurrent writers, and sorts by updated_at through them, reflecting each write at once', async () => {
    const own = newAccount();
    const made: Rec[] = [];
    for (let i = 0; i < 6; i++) made.push(await ok<Rec>('contacts-create', { first_name: `Stamp${i}` }, own));
    const [first, , busy, , later, last] = made as [Rec, Rec, Rec, Rec, Rec, Rec];
    // Ten concurrent writers of one record: the lost races' entries are deleted, the old ones too.
    await Promise.all(Array.from({ length: 10 }, (_, i) => ok('contacts-update', { id: busy.id, notes: `n${i}` }, own)));
    await ok('contacts-update', { id: later.id, city: 'Oslo' }, own);
    expect((await sortedIds(own.accountId, 'updated_at')).sort()).toEqual(made.map((r) => r.id).sort());

    const byStamp = (await walk({ sort: { field: 'updated_at', direction: 'desc' } }, own, 2)).flat();
    expect(byStamp.map((r) => r.id).slice(0, 2)).toEqual([later.id, busy.id]);
    expect(new Set(byStamp.map((r) => r.id)).size).toBe(6);
    const stamps = byStamp.map((r) => String(r.updated_at));
    expect(stamps).toEqual([...stamps].sort().reverse());
    // A range on updated_at, and a write reflected as soon as it returns.
    const since = String(later.created_at);
    const recent = (await walk({ filter: { field: 'updated_at', op: 'gt', value: since } }, own, 10)).flat().map((r) => r.id);
    expect(recent.sort()).toEqual([busy.id, later.id, last.id].sort());
    await ok('contacts-update', { id: first.id, notes: 'now' }, own);
    expect((await ok<Page>('contacts-list', { sort: { field: 'updated_at', direction: 'desc' }, limit: 1 }, own)).items[0]!.id).toBe(first.id);
  }, 60_000);

  it('keeps the entry of the value a record holds when racing writers write the same key, or set a value back', async () => {
    const own = newAccount();
    const store = familyOf(contactEntity).store;
    const made = await ok<Rec>('contacts-create', { first_name: 'Racer' }, own);
    const entriesOf = async (field: string) => {
      const out = await db().send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': keys.sortedPartition(own.accountId, 'contact', field) } }));
      return (out.Items ?? []).map((i) => String(i.sk));
    };
    // Twelve writers at the same instant, all setting the same first name: every racer puts the
    // same two keys (the stamp's and the name's); the ones that lose must not take the winner's away.
    const at = new Date(Date.now() + 60_000).toISOString();
    await Promise.all(Array.from({ length: 12 }, (_, i) => updateOptimistic(store, { accountId: own.accountId, id: made.id, now: at, decide: () => ({ set: { first_name: 'Same', notes: `n${i}` } }) })));
    const record = await ok<Rec>('contacts-get', { id: made.id }, own);
    expect(record.updated_at).toBe(at);
    expect(await entriesOf('updated_at')).toEqual([keys.sortedEntry(own.accountId, 'contact', 'updated_at', sortedKeyOf('datetime', at, positionKeyOf(made))).sk]);
    expect(await entriesOf('first_name')).toEqual([keys.sortedEntry(own.accountId, 'contact', 'first_name', sortedKeyOf('text', 'Same', positionKeyOf(made))).sk]);
    // A value set back and forth by concurrent writers: the record's value always has its entry.
    await Promise.all(Array.from({ length: 12 }, (_, i) => ok('contacts-update', { id: made.id, first_name: i % 2 ? 'Same' : 'Other' }, own)));
    const final = await ok<Rec>('contacts-get', { id: made.id }, own);
    expect(await entriesOf('first_name')).toContain(keys.sortedEntry(own.accountId, 'contact', 'first_name', sortedKeyOf('text', final.first_name, positionKeyOf(made))).sk);
    const byName = (await walk({ sort: { field: 'first_name', direction: 'asc' } }, own, 10)).flat().map((r) => r.id);
    expect(byName).toEqual([made.id]);
  }, 60_000);
});

describe('a write racing a change of `indexed` (the build or the removal passes its record before it commits)', () => {
  const auth = newAccount();
  let field = '';
  beforeAll(async () => {
    field = (await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'tier', field_type: 'number' }, auth)).id;
  });

  /** The sort keys of the field's entries as stored. */
  const entryKeys = async () => {
    const out = await db().send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': keys.sortedPartition(auth.accountId, 'contact', `custom_fields.${field}`) } }));
    return (out.Items ?? []).map((i) => String(i.sk)).sort();
  };
  const keyOf = (value: number, r: Record<string, unknown>) => keys.sortedEntry(auth.accountId, 'contact', `custom_fields.${field}`, sortedKeyOf('number', value, positionKeyOf(r))).sk;
  /** Turns `indexed` on or off and runs its build (or removal) to its end. */
  const turn = async (indexed: boolean) => {
    await ok('custom-fields-update', { id: field, indexed }, auth);
    expect(await runIndexBuild(await buildOf(auth.accountId), { pageSize: 50 })).toBe('completed');
  };
  /**
   * Runs `during` once, when the first write request whose body holds `marker` is about to reach
   * DynamoDB: after the write read the indexed fields, before it commits.
   */
  async function racing<T>(marker: string, during: () => Promise<void>, write: () => Promise<T>): Promise<T> {
    let fired = false;
    const name = `race-${marker}`;
    db().middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as Record<string, unknown>;
        const writes = 'TransactItems' in input || 'UpdateExpression' in input || ('RequestItems' in input && JSON.stringify(input).includes('PutRequest'));
        if (!fired && writes && JSON.stringify(input).includes(marker)) {
          fired = true;
          await during();
        }
        return next(args);
      },
      { step: 'build', name },
    );
    try {
      const out = await write();
      expect(fired).toBe(true);
      return out;
    } finally {
      db().middlewareStack.remove(name);
    }
  }

  it('an update that read the fields before they were turned on leaves the entry of its new value, not the build’s of the old one', async () => {
    const c = await ok<Rec>('contacts-create', { first_name: 'Tier1', custom_fields: { [field]: 1 } }, auth);
    await racing(keys.record(auth.accountId, 'contact', c.id).pk, () => turn(true), () => ok('contacts-update', { id: c.id, custom_fields: { [field]: 2 } }, auth));
    expect(await entryKeys()).toEqual([keyOf(2, c)]);
    const found = await ok<Page>('contacts-list', { filter: { field: `custom_fields.${field}`, op: 'eq', value: 2 } }, auth);
    expect(found.items.map((r) => r.id)).toEqual([c.id]);
    expect((await ok<Page>('contacts-list', { sort: { field: `custom_fields.${field}` } }, auth)).items.map((r) => r.id)).toEqual([c.id]);
  }, 60_000);

  it('a create that read the fields before they were turned off leaves no entry behind the removal', async () => {
    const c = await racing('RacerOff', () => turn(false), () => ok<Rec>('contacts-create', { first_name: 'RacerOff', custom_fields: { [field]: 5 } }, auth));
    expect(c.custom_fields[field]).toBe(5);
    expect(await entryKeys()).toEqual([]);
  }, 60_000);

  it('a delete that read the fields before they were turned on leaves no entry of the deleted record', async () => {
    const gone = await ok<Rec>('contacts-create', { first_name: 'Gone', custom_fields: { [field]: 3 } }, auth);
    await racing(keys.record(auth.accountId, 'contact', gone.id).pk, () => turn(true), () => ok('contacts-delete', { id: gone.id }, auth));
    const stored = await entryKeys();
    expect(stored).toHaveLength(2); // the other two records'
    expect(stored.some((k) => k.endsWith(gone.id))).toBe(false);
  }, 60_000);

  it('a create that read the fields before they were turned on gets its entry though the build did not see it', async () => {
    await turn(false);
    const c = await racing('RacerOn', () => turn(true), () => ok<Rec>('contacts-create', { first_name: 'RacerOn', custom_fields: { [field]: 9 } }, auth));
    expect(await entryKeys()).toContain(keyOf(9, c));
    expect(await entryKeys()).toHaveLength(3);
    const top = await ok<Page>('contacts-list', { sort: { field: `custom_fields.${field}`, direction: 'desc' }, limit: 1 }, auth);
    expect(top.items.map((r) => r.id)).toEqual([c.id]);
  }, 60_000);

  it('a batch create that read the fields before they were turned on gets the entries of all its records', async () => {
    await turn(false);
    const items = [20, 21].map((v) => ({ first_name: `BatchRacer${v}`, custom_fields: { [field]: v } }));
    await racing('BatchRacer', () => turn(true), () => ok('contacts-batch-create', { items }, auth));
    const top = await ok<Page>('contacts-list', { sort: { field: `custom_fields.${field}`, direction: 'desc' }, limit: 2 }, auth);
    expect(top.items.map((r) => r.first_name)).toEqual(['BatchRacer21', 'BatchRacer20']);
    expect(await entryKeys()).toHaveLength(5);
  }, 60_000);

  it('a merge that read the fields before they were turned on leaves no entry of its deleted secondary, and the primary’s of its value', async () => {
    await turn(false);
    const primary = await ok<Rec>('contacts-create', { first_name: 'MergeP', custom_fields: { [field]: 30 } }, auth);
    const secondary = await ok<Rec>('contacts-create', { first_name: 'MergeS', custom_fields: { [field]: 31 } }, auth);
    const exact = JSON.stringify(keys.record(auth.accountId, 'contact', secondary.id).pk);
    await racing(exact, () => turn(true), () => ok('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth));
    const stored = await entryKeys();
    expect(stored.some((k) => k.endsWith(secondary.id))).toBe(false);
    expect(stored).toContain(keyOf(30, primary));
  }, 60_000);

  it('a restore that read the fields before they were turned on gets the entry of its record back', async () => {
    await turn(false);
    const back = await ok<Rec>('contacts-create', { first_name: 'Restored', custom_fields: { [field]: 40 } }, auth);
    await ok('contacts-delete', { id: back.id }, auth);
    // The build does not see the trashed record; the restore read the fields before the change.
    await racing(JSON.stringify(keys.record(auth.accountId, 'contact', back.id).pk), () => turn(true), () => ok('contacts-restore', { id: back.id }, auth));
    expect(await entryKeys()).toContain(keyOf(40, back));
    const top = await ok<Page>('contacts-list', { sort: { field: `custom_fields.${field}`, direction: 'desc' }, limit: 1 }, auth);
    expect(top.items.map((r) => r.id)).toEqual([back.id]);
  }, 60_000);
});
