/**
 * Search entries: one small item per (record, indexed word prefix), in the prefix's partition,
 * sorted like the GSI (newest first when read backwards). Written by the stream worker from the
 * record's old and new images, with BatchWriteItem: idempotent (the same images give the same
 * puts and deletes), so a replayed stream batch is harmless.
 */
import { batchWriteItems, type WriteRequest } from './items.js';
import { type EntityType, keys } from './table.js';

export interface SearchSync {
  type: EntityType;
  accountId: string;
  id: string;
  createdAt: string;
  put: string[];
  remove: string[];
}

export async function syncSearchEntries(s: SearchSync): Promise<void> {
  const requests: WriteRequest[] = [
    ...s.put.map((name) => ({ PutRequest: { Item: { ...keys.indexEntry(s.accountId, s.type, name, s.createdAt, s.id), id: s.id } } })),
    ...s.remove.map((name) => ({ DeleteRequest: { Key: keys.indexEntry(s.accountId, s.type, name, s.createdAt, s.id) } })),
  ];
  if (requests.length) await batchWriteItems(requests);
}
