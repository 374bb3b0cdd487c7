/**
 * Search entries: one small item per (record, indexed word prefix), in the prefix's partition,
 * sorted like the GSI (newest first when read backwards). Written by the record store
 * (`syncSearch`, for the stream worker) from the record's old and new images, with
 * BatchWriteItem: idempotent (the same images give the same puts and deletes), so a replayed
 * stream batch is harmless.
 *
 * Partition sizes: a search of several words reads the partition of its rarest word, so the
 * worker also keeps a sampled count per partition. An entry is counted when a hash of (record,
 * prefix) falls in one of `COUNT_SAMPLE` buckets, so a create changes about one counter in
 * sixteen entries (1–2 extra write units for an ordinary contact instead of 25 for exact
 * counts), and the estimate (samples × `COUNT_SAMPLE`) is within a few tens of percent for the
 * partitions where it matters: large ones (a small partition is counted exactly by a probe; see
 * shared/search/index-choice.ts). A replayed stream batch may count an entry twice:
 * the count only picks which (always complete) partition to read, never what a page holds.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { controlTableName } from './control.js';
import { update } from './expr.js';
import { batchGetItems, batchWriteItems, type WriteRequest } from './items.js';
import { type EntityType, indexName, keys } from './table.js';

/**
 * Search entries and their counters live in the control table, not in the records' table: they
 * are derived from a record by the stream worker, and nothing reacts to them, so they must not
 * be stream records that the stream's reader passes in every account's line (an ordinary contact
 * writes about 45 of them; its record and lookups are 3). Reads name the table by partition.
 */
export const searchTableName = controlTableName;

const WORD_PARTITION = indexName.word('');
/** The table that holds an index partition: a search prefix's is the control table, every other (lookups, tags, references) the records' table. */
export const partitionTableName = (name: string): string => (name.startsWith(WORD_PARTITION) ? searchTableName() : tableName());

export interface SearchSync {
  type: EntityType;
  accountId: string;
  id: string;
  createdAt: string;
  put: string[];
  remove: string[];
}

/** One entry in this many is counted (a power of two). */
export const COUNT_SAMPLE = 16;

/** FNV-1a of the entry's identity: the same entry is sampled (or not) when put and when removed. */
export function isSampled(id: string, name: string): boolean {
  let h = 0x811c9dc5;
  const s = `${id}\u0000${name}`;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return (h & (COUNT_SAMPLE - 1)) === 0;
}

export async function syncSearchEntries(s: SearchSync): Promise<void> {
  const requests: WriteRequest[] = [
    ...s.put.map((name) => ({ PutRequest: { Item: { ...keys.indexEntry(s.accountId, s.type, name, s.createdAt, s.id), id: s.id } } })),
    ...s.remove.map((name) => ({ DeleteRequest: { Key: keys.indexEntry(s.accountId, s.type, name, s.createdAt, s.id) } })),
  ];
  const counted = [...s.put.filter((n) => isSampled(s.id, n)).map((n) => [n, 1] as const), ...s.remove.filter((n) => isSampled(s.id, n)).map((n) => [n, -1] as const)];
  // The counters beside the entries (not after them): no extra round trip on the worker's path.
  await Promise.all([
    requests.length ? batchWriteItems(requests, searchTableName()) : undefined,
    ...counted.map(([name, delta]) =>
      db().send(new UpdateCommand({ TableName: searchTableName(), Key: keys.partitionCount(s.accountId, s.type, name), ...update({ add: { n: delta } }) })),
    ),
  ]);
}

/** Estimated entries of each partition (0 when none was sampled). */
export async function estimatePartitionSizes(type: EntityType, accountId: string, names: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  const items = unique.length ? await batchGetItems(unique.map((n) => keys.partitionCount(accountId, type, n)), { table: searchTableName() }) : [];
  const byPk = new Map(items.map((i) => [String(i.pk), Math.max(0, Number(i.n ?? 0)) * COUNT_SAMPLE]));
  return new Map(unique.map((n) => [n, byPk.get(keys.partitionCount(accountId, type, n).pk) ?? 0]));
}
