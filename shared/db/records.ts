import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { billedItemSize, itemSize } from './capacity.js';
import { db, tableName } from './client.js';
import { type EntityType, keys, orderKey, TABLE_DEFINITION } from './table.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A stored record: the API fields plus bookkeeping (`ver` for optimistic locking, `idx` = its index entries). */
export type StoredRecord = Record<string, unknown> & {
  id: string;
  account_id: string;
  created_at: string;
  updated_at: string;
  ver: number;
  idx: string[];
};

export interface EntityModel {
  type: EntityType;
  /** Names of the index partitions this record belongs to (`t#tag`, `c#company`, `w#prefix`, …). */
  indexNames(record: Record<string, unknown>): string[];
}

/** Fields that live on the item but are not API fields. */
export const BOOKKEEPING = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'type', 'ver', 'idx'] as const;

export const positionOf = (r: { created_at: string; id: string }) => orderKey(r.created_at, r.id);

const MAX_TRANSACT_ITEMS = 100;

/** A conditional write (outside a transaction) whose condition did not hold. */
export const isConditionFailure = (error: unknown) => error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Thrown when optimistic locking lost a race; callers re-read and retry. */
export class WriteConflict extends Error {}

/** Re-runs `fn` (which re-reads what it depends on) while it loses optimistic-locking races. */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof WriteConflict) || i >= attempts) throw error;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * (i + 1)));
    }
  }
}

export function cancellationCodes(error: unknown): string[] | undefined {
  if (error instanceof TransactionCanceledException) return (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return undefined;
}

/**
 * Writes `items` atomically. A write larger than one transaction (only possible for a record
 * with ~50 tags and ~40 search prefixes changing at once) commits the record with its new index
 * entries first, then removes the stale ones: reads re-check every record, so a stale entry can
 * cost a read but never return a wrong result.
 */
async function transact(items: TransactItem[]): Promise<void> {
  for (let i = 0; i < items.length; i += MAX_TRANSACT_ITEMS) {
    await db().send(new TransactWriteCommand({ TransactItems: items.slice(i, i + MAX_TRANSACT_ITEMS) }));
  }
}

/** Runs a write, mapping a failed condition (a lost optimistic-lock race) to WriteConflict. */
async function guarded(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes && (codes.includes('ConditionalCheckFailed') || codes.includes('TransactionConflict'))) throw new WriteConflict();
    if (isConditionFailure(error)) throw new WriteConflict();
    throw error;
  }
}

const indexPut = (accountId: string, type: EntityType, name: string, r: { created_at: string; id: string }): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...keys.indexEntry(accountId, type, name, r.created_at, r.id), id: r.id } },
});
const indexDelete = (accountId: string, type: EntityType, name: string, r: { created_at: string; id: string }): TransactItem => ({
  Delete: { TableName: tableName(), Key: keys.indexEntry(accountId, type, name, r.created_at, r.id) },
});

export async function getRecord(type: EntityType, accountId: string, id: string, consistent = true): Promise<StoredRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.record(accountId, type, id), ConsistentRead: consistent }));
  return out.Item as StoredRecord | undefined;
}

export interface CreateArgs {
  accountId: string;
  userId: string;
  fields: Record<string, unknown>;
  /** Condition checks (e.g. the referenced company still at the version read). */
  checks?: TransactItem[];
}

/** The items of a new record: the record itself and its index entries (also used by seeding tools). */
export function newRecordItems(model: EntityModel, args: Omit<CreateArgs, 'checks'>, now = new Date().toISOString(), id: string = randomUUID()) {
  const base = { id, account_id: args.accountId, created_by: args.userId, ...args.fields, created_at: now, updated_at: now };
  const idx = model.indexNames(base);
  const record = { ...base, ver: 1, idx } as StoredRecord;
  const item = {
    ...keys.record(args.accountId, model.type, id),
    ...keys.recordGsi(args.accountId, model.type, now, id),
    type: model.type,
    ...record,
  };
  const entries = idx.map((name) => ({ ...keys.indexEntry(args.accountId, model.type, name, now, id), id }));
  return { record, item, entries };
}

export async function createRecord(model: EntityModel, args: CreateArgs): Promise<StoredRecord> {
  const { record, item, entries } = newRecordItems(model, args);
  await guarded(() =>
    transact([
      ...(args.checks ?? []),
      { Put: { TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      ...entries.map((Item) => ({ Put: { TableName: tableName(), Item } })),
    ]),
  );
  return record;
}

export interface Change {
  /** Top-level fields to set. */
  set?: Record<string, unknown>;
  /** custom_fields keys to set. */
  customSet?: Record<string, unknown>;
  /** custom_fields keys to remove. */
  customRemove?: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Drops the parts of a change that would not change the record. */
export function effectiveChange(current: StoredRecord, change: Change): Change | undefined {
  const set = Object.fromEntries(Object.entries(change.set ?? {}).filter(([k, v]) => !same(current[k], v)));
  const custom = (current.custom_fields ?? {}) as Record<string, unknown>;
  const customSet = Object.fromEntries(Object.entries(change.customSet ?? {}).filter(([k, v]) => !same(custom[k], v)));
  const customRemove = (change.customRemove ?? []).filter((k) => k in custom);
  if (Object.keys(set).length === 0 && Object.keys(customSet).length === 0 && customRemove.length === 0) return undefined;
  return { set, customSet, customRemove };
}

export interface UpdateArgs {
  accountId: string;
  id: string;
  /** Computes the change from the current record; may throw an ApiError. */
  compute: (current: StoredRecord) => Promise<Change | undefined> | Change | undefined;
  /** Extra items for the same transaction (condition checks, metadata). */
  extra?: (current: StoredRecord, next: StoredRecord) => TransactItem[];
}

/**
 * Partial update with optimistic locking: only the fields that change are written, only the
 * index entries whose values changed are put or deleted, and a lost race re-reads and retries,
 * so concurrent updates of different fields both survive.
 * Returns undefined when the record does not exist.
 */
export async function updateRecord(model: EntityModel, args: UpdateArgs): Promise<StoredRecord | undefined> {
  for (let attempt = 0; ; attempt++) {
    const current = await getRecord(model.type, args.accountId, args.id);
    if (!current) return undefined;
    const wanted = await args.compute(current);
    const change = wanted && effectiveChange(current, wanted);
    if (!change) return current;
    const now = new Date().toISOString();
    const custom = { ...((current.custom_fields ?? {}) as Record<string, unknown>), ...change.customSet };
    for (const k of change.customRemove ?? []) delete custom[k];
    const draft = { ...current, ...change.set, custom_fields: custom, updated_at: now };
    const idx = model.indexNames(draft);
    const next = { ...draft, ver: current.ver + 1, idx } as StoredRecord;
    const added = idx.filter((n) => !current.idx.includes(n));
    const removed = current.idx.filter((n) => !idx.includes(n));

    const names: Record<string, string> = { '#ver': 'ver', '#upd': 'updated_at' };
    const values: Record<string, unknown> = { ':ver': current.ver, ':nver': next.ver, ':upd': now };
    const sets = ['#ver = :nver', '#upd = :upd'];
    const removes: string[] = [];
    Object.entries(change.set ?? {}).forEach(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:f${i}`] = v;
      sets.push(`#f${i} = :f${i}`);
    });
    if (Object.keys(change.customSet ?? {}).length || (change.customRemove ?? []).length) names['#cf'] = 'custom_fields';
    Object.entries(change.customSet ?? {}).forEach(([k, v], i) => {
      names[`#c${i}`] = k;
      values[`:c${i}`] = v;
      sets.push(`#cf.#c${i} = :c${i}`);
    });
    (change.customRemove ?? []).forEach((k, i) => {
      names[`#r${i}`] = k;
      removes.push(`#cf.#r${i}`);
    });
    if (added.length || removed.length) {
      names['#idx'] = 'idx';
      values[':idx'] = idx;
      sets.push('#idx = :idx');
    }
    const update = {
      TableName: tableName(),
      Key: keys.record(args.accountId, model.type, args.id),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: '#ver = :ver',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
    billedItemSize.set(update, Math.max(itemSize(current), itemSize(next)));
    const extra = args.extra?.(current, next) ?? [];
    try {
      if (added.length === 0 && removed.length === 0 && extra.length === 0) {
        await guarded(() => db().send(new UpdateCommand(update)).then(() => undefined));
      } else {
        await guarded(() =>
          transact([
            { Update: update },
            ...extra,
            ...added.map((n) => indexPut(args.accountId, model.type, n, current)),
            ...removed.map((n) => indexDelete(args.accountId, model.type, n, current)),
          ]),
        );
      }
      return next;
    } catch (error) {
      if (error instanceof WriteConflict && attempt < 8) continue;
      throw error;
    }
  }
}

/** Deletes a record and its index entries in one transaction. Returns the record as it was. */
export async function deleteRecord(
  model: EntityModel,
  accountId: string,
  id: string,
  extra?: (current: StoredRecord) => TransactItem[],
): Promise<StoredRecord | undefined> {
  for (let attempt = 0; ; attempt++) {
    const current = await getRecord(model.type, accountId, id);
    if (!current) return undefined;
    try {
      await guarded(() =>
        transact([
          {
            Delete: {
              TableName: tableName(),
              Key: keys.record(accountId, model.type, id),
              ConditionExpression: '#ver = :ver',
              ExpressionAttributeNames: { '#ver': 'ver' },
              ExpressionAttributeValues: { ':ver': current.ver },
            },
          },
          ...(extra?.(current) ?? []),
          ...current.idx.map((n) => indexDelete(accountId, model.type, n, current)),
        ]),
      );
      return current;
    } catch (error) {
      if (error instanceof WriteConflict && attempt < 8) continue;
      throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading lists: a driver yields candidate positions newest first; records are fetched and
// re-checked against every filter until the page (plus one, to know whether more exist) is full.
// ---------------------------------------------------------------------------------------------

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

/** Every item of one partition (small partitions only: definitions, endpoints, a company's contacts). */
export async function queryPartition<T = Record<string, unknown>>(pk: string, opts: { projection?: string } = {}): Promise<T[]> {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': pk },
        ...(opts.projection ? { ProjectionExpression: opts.projection } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...((out.Items ?? []) as T[]));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Newest first: created_at descending, then id descending. */
export const newestFirst = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at);

/** BatchGetItem of any keys, in chunks of 100, retrying unprocessed keys with back-off. */
export async function batchGetItems(itemKeys: Record<string, unknown>[], opts: { consistent?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let pending = [...itemKeys];
  for (let attempt = 0; pending.length > 0; attempt++) {
    const chunk = pending.slice(0, 100);
    pending = pending.slice(100);
    const out = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: chunk, ...(opts.consistent ? { ConsistentRead: true } : {}) } } }));
    found.push(...(out.Responses?.[tableName()] ?? []));
    const unprocessed = out.UnprocessedKeys?.[tableName()]?.Keys ?? [];
    if (unprocessed.length) {
      if (attempt > 10) throw new Error('BatchGetItem kept returning unprocessed keys');
      await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
      pending.push(...unprocessed);
    }
  }
  return found;
}

async function batchGet(type: EntityType, accountId: string, ids: string[]): Promise<Map<string, StoredRecord>> {
  const items = await batchGetItems([...new Set(ids)].map((id) => keys.record(accountId, type, id)));
  return new Map(items.map((item) => [String(item.id), item as StoredRecord]));
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
    const [fetched] = await Promise.all([missing.length ? batchGet(type, args.accountId, missing) : new Map<string, StoredRecord>(), args.ready]);
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
