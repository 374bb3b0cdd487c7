/**
 * Index builds of the record store (contract §17): the sort-ordered entries of one custom field
 * written for every existing record, or removed, page by page. Internal to the data layer: the
 * record store (record-store.ts) is the only caller.
 *
 * A build starts after the field joined the account's indexed fields (META `ix#<id>`): from then
 * on every write keeps the field's entry itself. A page puts the entries of the records it read,
 * then reads those records again (strongly consistent): a record written or deleted meanwhile
 * gets its entry corrected, so no record is left without its entry or with a stale one.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type EntityDefinition, entityByType } from '../schemas/entities/index.js';
import type { FieldType } from '../schemas/filter.js';
import { CUSTOM_FIELD_PREFIX } from '../schemas/filter.js';
import { putItems, readRecords } from './batch.js';
import { db, tableName } from './client.js';
import { afterCursor, eq, merge, notExists, partition, project, update } from './expr.js';
import { batchGetItems, batchWriteItems, isConditionFailure, scanPages } from './items.js';
import { positionKeyOf, sortedEntriesOf, sortedFieldValue, sortedKeyOf } from './record-model.js';
import { type EntityType, keys, orderKey, TABLE_DEFINITION } from './table.js';

const entryOf = (accountId: string, type: EntityType, field: string, fieldType: FieldType, r: Record<string, unknown>) => ({
  ...keys.sortedEntry(accountId, type, field, sortedKeyOf(fieldType, sortedFieldValue(r, field), positionKeyOf(r))),
  id: String(r.id),
  pos: orderKey(String(r.created_at), String(r.id)),
  ...(typeof r.ver === 'number' ? { ver: r.ver } : {}),
});

export interface BuildPage {
  /** Records (build) or entries (remove) handled. */
  done: number;
  /** Where the next page starts (undefined: nothing is left). */
  after?: string;
}

/** Writes the entries of custom field `fieldId` for the records after position `after` (oldest first), at most `limit`. */
export async function buildSortedPage(type: EntityType, accountId: string, fieldId: string, fieldType: FieldType, after: string | undefined, limit: number): Promise<BuildPage> {
  const field = `${CUSTOM_FIELD_PREFIX}${fieldId}`;
  const g = TABLE_DEFINITION.gsi1;
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: g.name,
      ...merge(afterCursor(keys.listPartition(accountId, type), after, { forward: true, index: 'gsi1' }), project('id', 'created_at', 'ver', ['custom_fields', fieldId])),
      ScanIndexForward: true,
      Limit: limit,
    }),
  );
  const read = out.Items ?? [];
  if (read.length === 0) return { done: 0 };
  const written = new Map(read.map((r) => [String(r.id), entryOf(accountId, type, field, fieldType, r)]));
  await putItems([...written.values()]);
  // Records written or deleted since the query: their entry now follows the record as it is.
  const ids = [...written.keys()];
  const chunks = Array.from({ length: Math.ceil(ids.length / 100) }, (_, i) => ids.slice(i * 100, i * 100 + 100));
  const now = new Map((await Promise.all(chunks.map((c) => readRecords(type, accountId, c)))).flatMap((m) => [...m]));
  const fixes = [...written].flatMap(([id, entry]) => {
    const current = now.get(id);
    const want = current && entryOf(accountId, type, field, fieldType, current);
    if (want && want.sk === entry.sk) return [];
    return [{ DeleteRequest: { Key: { pk: entry.pk, sk: entry.sk } } }, ...(want ? [{ PutRequest: { Item: want } }] : [])];
  });
  if (fixes.length) await batchWriteItems(fixes);
  const last = read[read.length - 1]!;
  return { done: read.length, ...(out.LastEvaluatedKey ? { after: orderKey(String(last.created_at), String(last.id)) } : {}) };
}

/** Deletes up to `limit` entries of custom field `fieldId` (its partition, from the start: what was deleted is gone). */
export async function removeSortedPage(type: EntityType, accountId: string, fieldId: string, limit: number): Promise<BuildPage> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...merge(partition(keys.sortedPartition(accountId, type, `${CUSTOM_FIELD_PREFIX}${fieldId}`)), project('pk', 'sk')),
      Limit: limit,
    }),
  );
  const items = out.Items ?? [];
  for (let i = 0; i < items.length; i += 25) await batchWriteItems(items.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } })));
  return { done: items.length, ...(out.LastEvaluatedKey ? { after: 'more' } : {}) };
}

/** What separates a sorted entry's value from its position (`v<value>\u0001<position>`), from the key declarations. */
const POSITION_SEPARATOR = keys.sortedEmpty('').slice(keys.sortedEmptyFrom.length);

/**
 * The sort key a sorted entry has in this version (value, then list position), when it still has
 * an earlier version's (value, then id): else undefined.
 */
export function rekeyedSortKey(item: Record<string, unknown>): string | undefined {
  const sk = String(item.sk ?? '');
  if (typeof item.pos !== 'string' || typeof item.id !== 'string') return undefined;
  if (!sk.startsWith(keys.sortedValuesFrom) && !sk.startsWith(keys.sortedEmptyFrom)) return undefined;
  const at = sk.lastIndexOf(POSITION_SEPARATOR);
  if (at < 0 || sk.slice(at + POSITION_SEPARATOR.length) !== item.id) return undefined;
  return sk.slice(0, at + POSITION_SEPARATOR.length) + item.pos;
}

/**
 * Upgrade: rekeys every sorted entry written by a version that ordered a value's entries by id
 * (contract §17 now orders them by created_at, then id) — a Scan of the table, each such entry
 * put under its new key, then its old one deleted (a run stopped between the two leaves a
 * duplicate that the list's re-check skips and the next run removes). Idempotent.
 */
export async function rekeySortedEntries(opts: { table: string; segments?: number; onPage?: (p: { scanned: number; rekeyed: number }) => void }): Promise<{ scanned: number; rekeyed: number }> {
  const total = opts.segments ?? 4;
  const progress = { scanned: 0, rekeyed: 0 };
  await scanPages(opts.table, total, async (items, scanned) => {
    const old = items.flatMap((item) => {
      const sk = rekeyedSortKey(item);
      return sk ? [{ item, sk }] : [];
    });
    if (old.length) {
      await batchWriteItems(old.map(({ item, sk }) => ({ PutRequest: { Item: { ...item, sk } } })), opts.table);
      await batchWriteItems(old.map(({ item }) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })), opts.table);
    }
    progress.scanned += scanned;
    progress.rekeyed += old.length;
    opts.onPage?.({ ...progress });
  });
  return progress;
}

/**
 * Upgrade: gives every project record in a stage the GSI2 attributes (`stageGsi`: the stage's
 * records, which pipelines-board and projects-list's `stage_id eq` read) that a version before
 * GSI2 did not write — a Scan of the table, each such record updated on condition its stage is
 * still the one read (a record written since has them already). Idempotent.
 */
export async function placeStageIndex(opts: { table: string; segments?: number; onPage?: (p: { scanned: number; placed: number }) => void }): Promise<{ scanned: number; placed: number }> {
  const g = TABLE_DEFINITION.gsi2;
  const progress = { scanned: 0, placed: 0 };
  await scanPages(opts.table, opts.segments ?? 4, async (items, scanned) => {
    const missing = items.filter((i) => i.sk === keys.recordSk && typeof i[g.stageField] === 'string' && i[g.stageField] !== '' && i[g.partitionKey] === undefined);
    for (const r of missing) {
      const type = r[TABLE_DEFINITION.entityTypeAttribute] as EntityType;
      const set = keys.stageGsi(String(r.account_id), type, String(r[g.stageField]), String(r.created_at), String(r.id));
      try {
        await db().send(new UpdateCommand({ TableName: opts.table, Key: { pk: r.pk, sk: r.sk }, ...update({ set }, eq(g.stageField, r[g.stageField]), notExists(g.partitionKey)) }));
        progress.placed++;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    progress.scanned += scanned;
    opts.onPage?.({ ...progress });
  });
  return progress;
}

/** A sorted entry placed for a record: its record's type, account and id, the field and the item. */
interface Placed {
  type: EntityType;
  accountId: string;
  id: string;
  field: string;
  item: Record<string, unknown>;
}

/** The built-in sort-ordered entries of a record item (its definition's `sorted` fields; custom fields have their own index builds). */
function builtInEntries(r: Record<string, unknown>): Placed[] {
  const type = r[TABLE_DEFINITION.entityTypeAttribute] as EntityType;
  const def = entityByType(String(type)) as EntityDefinition | undefined;
  if (!def?.sorted?.length || typeof r.id !== 'string' || typeof r.created_at !== 'string') return [];
  const accountId = String(r.account_id);
  return Object.entries(sortedEntriesOf(def, r)).map(([field, at]) => ({
    type,
    accountId,
    id: r.id as string,
    field,
    item: {
      ...keys.sortedEntry(accountId, type, field, at),
      id: r.id,
      pos: orderKey(String(r.created_at), String(r.id)),
      ...(typeof r.ver === 'number' ? { ver: r.ver } : {}),
    },
  }));
}

const itemKey = (i: Record<string, unknown>) => `${String(i.pk)}\u0000${String(i.sk)}`;

/** Runs `fn` over `all`, 25 at a time. */
async function inChunks<T>(all: readonly T[], fn: (t: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < all.length; i += 25) await Promise.all(all.slice(i, i + 25).map(fn));
}

/** A conditional write whose refused condition is an answer (false), not an error. */
async function unlessRefused(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Upgrade: gives every record the built-in sort-ordered entries (contract §17: its definition's
 * `sorted` fields) that the version that wrote it did not keep (a field that joined `sorted`
 * later: owners, assignees) — a Scan of the table; for the record items of each page, their
 * entries read (eventually consistent) and each missing one put on condition it is still missing
 * (a write since may have put it). Then, as an index build's page does, the records it placed
 * entries for are read again (strongly consistent): an entry that no longer matches the record
 * as it is now (updated since the scan: the update's own entry is the right one; deleted or
 * trashed since: a deletion removes its record's entries) is deleted while still the one placed,
 * and the record's right entry put where missing. Trashed records have no record item (their
 * image is in the trash item) and so get no entries: a restore writes them all. Idempotent: a
 * second run reads and places nothing. `beforeReread`: for tests, what happens between the puts
 * and the read again.
 */
export async function placeSortedEntries(opts: {
  table: string;
  segments?: number;
  onPage?: (p: { scanned: number; placed: number }) => void;
  beforeReread?: (placed: readonly Placed[]) => Promise<void>;
}): Promise<{ scanned: number; placed: number }> {
  const table = opts.table;
  const progress = { scanned: 0, placed: 0 };
  const putIfMissing = (item: Record<string, unknown>) => unlessRefused(db().send(new PutCommand({ TableName: table, Item: item, ...notExists() })));
  await scanPages(table, opts.segments ?? 4, async (items, scanned) => {
    const wanted = items.filter((i) => i.sk === keys.recordSk).flatMap(builtInEntries);
    const found = wanted.length ? new Set((await batchGetItems(wanted.map(({ item }) => ({ pk: item.pk, sk: item.sk })), { table })).map(itemKey)) : new Set<string>();
    const placed: Placed[] = [];
    await inChunks(
      wanted.filter(({ item }) => !found.has(itemKey(item))),
      async (p) => {
        if (await putIfMissing(p.item)) placed.push(p);
      },
    );
    if (placed.length) {
      await opts.beforeReread?.(placed);
      // The records written, deleted or trashed since the scan: each placed entry follows the record as it is now.
      const recordKeys = new Map(placed.map((p) => [`${p.type}\u0000${p.accountId}\u0000${p.id}`, keys.record(p.accountId, p.type, p.id)]));
      const now = new Map((await batchGetItems([...recordKeys.values()], { consistent: true, table })).map((r) => [itemKey(r), r]));
      await inChunks(placed, async (p) => {
        const current = now.get(itemKey(keys.record(p.accountId, p.type, p.id)));
        const want = current && builtInEntries(current).find((e) => e.field === p.field);
        if (want && want.item.sk === p.item.sk) return;
        // Only while it is still the entry placed: a write since that set the value back owns it.
        const placedVer = typeof p.item.ver === 'number' ? eq('ver', p.item.ver) : notExists('ver');
        await unlessRefused(db().send(new DeleteCommand({ TableName: table, Key: { pk: p.item.pk, sk: p.item.sk }, ...placedVer })));
        if (want) await putIfMissing(want.item);
      });
    }
    progress.scanned += scanned;
    progress.placed += placed.length;
    opts.onPage?.({ ...progress });
  });
  return progress;
}
