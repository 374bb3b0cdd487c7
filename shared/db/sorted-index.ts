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
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FieldType } from '../schemas/filter.js';
import { CUSTOM_FIELD_PREFIX } from '../schemas/filter.js';
import { putItems, readRecords } from './batch.js';
import { db, tableName } from './client.js';
import { afterCursor, eq, merge, notExists, partition, project, update } from './expr.js';
import { batchWriteItems, isConditionFailure, scanPages } from './items.js';
import { positionKeyOf, sortedFieldValue, sortedKeyOf } from './record-model.js';
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
