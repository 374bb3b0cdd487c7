/**
 * The list engine: a driver yields candidate positions newest first (the account's GSI list, or
 * a k-way merge of index partitions); records are fetched and re-checked against every filter
 * until the page (plus one, to know whether more exist) is full.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { batchGetRecords, positionOf, type StoredRecord } from './items.js';
import { type EntityType, keys, TABLE_DEFINITION } from './table.js';

export type Driver =
  /** The account's whole list (GSI1), optionally re-checked. */
  | { kind: 'all' }
  /** The union of index partitions (one tag, a company set, a search prefix, …). */
  | { kind: 'index'; names: string[] };

interface Candidate {
  position: string;
  id: string;
  item?: StoredRecord;
}

/** Newest-first reader of one partition, strictly below `after`, page by page (handles empty pages). */
export async function* readPartition(input: Omit<QueryCommandInput, 'TableName'>, sortKey: string, after: string | undefined, pageSize: number): AsyncGenerator<Record<string, unknown>> {
  let startKey: Record<string, unknown> | undefined;
  const names = { ...(input.ExpressionAttributeNames ?? {}), '#sk': sortKey };
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...input,
        KeyConditionExpression: after ? `${input.KeyConditionExpression} AND #sk < :after` : input.KeyConditionExpression,
        ExpressionAttributeNames: after ? names : input.ExpressionAttributeNames,
        ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ...(after ? { ':after': after } : {}) },
        ScanIndexForward: false,
        Limit: pageSize,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) yield item;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

async function* candidates(type: EntityType, accountId: string, driver: Driver, after: string | undefined, pageSize: number): AsyncGenerator<Candidate> {
  if (driver.kind === 'all') {
    const g = TABLE_DEFINITION.gsi1;
    for await (const item of readPartition(
      { IndexName: g.name, KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': g.partitionKey }, ExpressionAttributeValues: { ':p': keys.listPartition(accountId, type) } },
      g.sortKey,
      after,
      pageSize,
    )) {
      yield { position: String(item.gsi1sk), id: String(item.id), item: item as StoredRecord };
    }
    return;
  }
  const readers = [...new Set(driver.names)].map((name) =>
    readPartition(
      { KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': 'pk' }, ExpressionAttributeValues: { ':p': keys.indexPartition(accountId, type, name) } },
      'sk',
      after,
      pageSize,
    )[Symbol.asyncIterator](),
  );
  // k-way merge, newest first, without duplicates. A reader advances only after its head was
  // consumed, so no partition is read further than the page needs.
  const heads = await Promise.all(readers.map((r) => r.next()));
  let last: string | undefined;
  let consumed = -1;
  for (;;) {
    if (consumed >= 0) heads[consumed] = await readers[consumed]!.next();
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h.done) continue;
      if (best < 0 || String(h.value.sk) > String((heads[best]!.value as Record<string, unknown>).sk)) best = i;
    }
    if (best < 0) return;
    const value = heads[best]!.value as Record<string, unknown>;
    consumed = best;
    const position = String(value.sk);
    if (position === last) continue;
    last = position;
    yield { position, id: String(value.id) };
  }
}

/**
 * Counts a partition's entries below `after`, reading at most `limit`: `exhausted` when the
 * partition holds no more than that. Used to pick the most selective index for a list.
 */
export async function probePartition(type: EntityType, accountId: string, name: string, after: string | undefined, limit: number): Promise<{ count: number; exhausted: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: after ? 'pk = :p AND sk < :after' : 'pk = :p',
      ExpressionAttributeValues: { ':p': keys.indexPartition(accountId, type, name), ...(after ? { ':after': after } : {}) },
      Select: 'COUNT',
      Limit: limit,
    }),
  );
  return { count: out.Count ?? 0, exhausted: !out.LastEvaluatedKey };
}

export interface ListArgs {
  accountId: string;
  driver: Driver;
  /** Re-checks a fetched record against every filter of the request. */
  matches?: (record: StoredRecord) => boolean;
  /** Awaited before the first re-check (lets the caller's own reads overlap the first query). */
  ready?: Promise<unknown>;
  /** Position (exclusive) to continue after. */
  after?: string;
  limit: number;
}

export interface ListPage {
  items: StoredRecord[];
  /** Position of the last item when more matching items exist. */
  next?: string;
}

export async function listRecords(type: EntityType, args: ListArgs): Promise<ListPage> {
  const want = args.limit + 1;
  const matches = args.matches ?? (() => true);
  const out: StoredRecord[] = [];
  const stream = candidates(type, args.accountId, args.driver, args.after, want)[Symbol.asyncIterator]();
  let exhausted = false;
  while (out.length < want && !exhausted) {
    const batch: Candidate[] = [];
    while (batch.length < want - out.length) {
      const n = await stream.next();
      if (n.done) {
        exhausted = true;
        break;
      }
      batch.push(n.value);
    }
    const missing = batch.filter((c) => !c.item).map((c) => c.id);
    const [fetched] = await Promise.all([missing.length ? batchGetRecords(type, args.accountId, missing) : new Map<string, StoredRecord>(), args.ready]);
    for (const c of batch) {
      const record = c.item ?? fetched.get(c.id);
      if (record && positionOf(record) === c.position && matches(record)) out.push(record);
    }
  }
  await stream.return?.(undefined);
  if (out.length > args.limit) {
    const items = out.slice(0, args.limit);
    return { items, next: positionOf(items[items.length - 1]!) };
  }
  return { items: out };
}
