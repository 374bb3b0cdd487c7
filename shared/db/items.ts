/**
 * Item-level helpers of the data layer: the stored record's type, single and batched reads,
 * small-partition queries and the conditional-failure tests every writer uses.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { afterCursor, itemOf, partition, type TransactItem } from './expr.js';
import { type EntityType, keys, orderKey, TABLE_DEFINITION } from './table.js';

export { cancellationCodes, type TransactItem } from './expr.js';

/** A stored record: the API fields plus bookkeeping (`ver` for optimistic locking, `idx` = its index entries). */
export type StoredRecord = Record<string, unknown> & {
  id: string;
  account_id: string;
  created_at: string;
  updated_at: string;
  ver: number;
  idx: string[];
};

/** The record of a stored item (its keys and entity type left out): what a trash or merge item keeps. */
export const recordOf = (item: Record<string, unknown>): StoredRecord => itemOf<StoredRecord>(item, [TABLE_DEFINITION.entityTypeAttribute]);

export const positionOf = (r: { created_at: string; id: string }) => orderKey(r.created_at, r.id);

/** A conditional write (outside a transaction) whose condition did not hold. */
export const isConditionFailure = (error: unknown) => error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * One conditional write, declared as a transaction item is (`{ Put }`, `{ Update }` or
 * `{ Delete }`), whose refused condition is an answer: false when refused; any other failure throws.
 */
export async function writeUnlessRefused(item: TransactItem): Promise<boolean> {
  try {
    if (item.Put) await db().send(new PutCommand(item.Put));
    else if (item.Update) await db().send(new UpdateCommand(item.Update));
    else if (item.Delete) await db().send(new DeleteCommand(item.Delete));
    else throw new Error('a single write is a Put, an Update or a Delete');
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

export async function getRecord(type: EntityType, accountId: string, id: string, consistent = true): Promise<StoredRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.record(accountId, type, id), ConsistentRead: consistent }));
  return out.Item as StoredRecord | undefined;
}

/**
 * Every item a Query returns, page after page (a page that comes back empty with a
 * LastEvaluatedKey is followed). Strongly consistent on the table; a GSI read cannot be.
 */
export async function* queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'ConsistentRead'> & { TableName?: string }): AsyncGenerator<Record<string, unknown>> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand({ TableName: tableName(), ...input, ...(input.IndexName ? {} : { ConsistentRead: true }), ExclusiveStartKey: startKey }));
    yield* out.Items ?? [];
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/** Every item of one partition (small partitions only: definitions, endpoints, a company's contacts). */
export async function queryPartition<T = Record<string, unknown>>(pk: string, opts: { projection?: string } = {}): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queryAll({ ...partition(pk), ...(opts.projection ? { ProjectionExpression: opts.projection } : {}) })) {
    items.push(item as T);
  }
  return items;
}

/** One page of an account's list (a GSI1 partition), newest first, strictly after the position `after`. */
export async function queryNewestFirst(listPartition: string, limit: number, after?: string): Promise<Record<string, unknown>[]> {
  const out = await db().send(
    new QueryCommand({ TableName: tableName(), IndexName: TABLE_DEFINITION.gsi1.name, ...afterCursor(listPartition, after, { index: 'gsi1' }), ScanIndexForward: false, Limit: limit }),
  );
  return out.Items ?? [];
}

/**
 * A parallel Scan of `table` in `segments` segments (an upgrade's pass over every item): `onPage`
 * gets each page's items and how many it scanned, a segment's pages one after the other.
 */
export async function scanPages(table: string, segments: number, onPage: (items: Record<string, unknown>[], scanned: number) => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      let startKey: Record<string, unknown> | undefined;
      do {
        const out = await db().send(new ScanCommand({ TableName: table, Segment: segment, TotalSegments: segments, ExclusiveStartKey: startKey }));
        await onPage(out.Items ?? [], out.ScannedCount ?? 0);
        startKey = out.LastEvaluatedKey;
      } while (startKey);
    }),
  );
}

/** Newest first: created_at descending, then id descending. */
export const newestFirst = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at);

/** BatchGetItem of any keys (of the table, or of `opts.table`), in chunks of 100, retrying unprocessed keys with back-off. */
export async function batchGetItems(itemKeys: Record<string, unknown>[], opts: { consistent?: boolean; table?: string } = {}): Promise<Record<string, unknown>[]> {
  const table = opts.table ?? tableName();
  const found: Record<string, unknown>[] = [];
  let pending = [...itemKeys];
  for (let attempt = 0; pending.length > 0; attempt++) {
    const chunk = pending.slice(0, 100);
    pending = pending.slice(100);
    const out = await db().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: chunk, ...(opts.consistent ? { ConsistentRead: true } : {}) } } }));
    found.push(...(out.Responses?.[table] ?? []));
    const unprocessed = out.UnprocessedKeys?.[table]?.Keys ?? [];
    if (unprocessed.length) {
      if (attempt > 10) throw new Error('BatchGetItem kept returning unprocessed keys');
      await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
      pending.push(...unprocessed);
    }
  }
  return found;
}

export async function batchGetRecords(type: EntityType, accountId: string, ids: string[]): Promise<Map<string, StoredRecord>> {
  const items = await batchGetItems([...new Set(ids)].map((id) => keys.record(accountId, type, id)));
  return new Map(items.map((item) => [String(item.id), item as StoredRecord]));
}


export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * BatchWriteItem of any puts and deletes (not atomic: for idempotent, independent items), 25 per
 * call, retrying unprocessed items with back-off.
 */
export async function batchWriteItems(requests: WriteRequest[], table: string = tableName()): Promise<void> {
  let pending = [...requests];
  for (let attempt = 0; pending.length > 0; ) {
    const chunk = pending.slice(0, 25);
    pending = pending.slice(25);
    const out = await db().send(new BatchWriteCommand({ RequestItems: { [table]: chunk } }));
    const unprocessed = out.UnprocessedItems?.[table] ?? [];
    if (unprocessed.length) {
      if (++attempt > 12) throw new Error('BatchWriteItem kept returning unprocessed items');
      await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
      pending.push(...unprocessed);
    }
  }
}
