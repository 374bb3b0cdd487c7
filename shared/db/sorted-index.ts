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
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { FieldType } from '../schemas/filter.js';
import { CUSTOM_FIELD_PREFIX } from '../schemas/filter.js';
import { putItems, readRecords } from './batch.js';
import { db, tableName } from './client.js';
import { batchWriteItems } from './items.js';
import { sortedFieldValue, sortedKeyOf } from './record-model.js';
import { type EntityType, keys, orderKey, TABLE_DEFINITION } from './table.js';

const entryOf = (accountId: string, type: EntityType, field: string, fieldType: FieldType, r: Record<string, unknown>) => ({
  ...keys.sortedEntry(accountId, type, field, sortedKeyOf(fieldType, sortedFieldValue(r, field), String(r.id))),
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
      KeyConditionExpression: after ? '#p = :p AND #s > :a' : '#p = :p',
      ExpressionAttributeNames: { '#p': g.partitionKey, ...(after ? { '#s': g.sortKey } : {}), '#id': 'id', '#cf': 'custom_fields', '#f': fieldId, '#v': 'ver' },
      ExpressionAttributeValues: { ':p': keys.listPartition(accountId, type), ...(after ? { ':a': after } : {}) },
      ProjectionExpression: '#id, created_at, #v, #cf.#f',
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
      KeyConditionExpression: 'pk = :p',
      ExpressionAttributeValues: { ':p': keys.sortedPartition(accountId, type, `${CUSTOM_FIELD_PREFIX}${fieldId}`) },
      ProjectionExpression: 'pk, sk',
      Limit: limit,
    }),
  );
  const items = out.Items ?? [];
  for (let i = 0; i < items.length; i += 25) await batchWriteItems(items.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } })));
  return { done: items.length, ...(out.LastEvaluatedKey ? { after: 'more' } : {}) };
}
