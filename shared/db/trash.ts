/**
 * The trash, restores, cascade records and merges (contract §15). Items (keys in table.ts):
 *
 * - trash item `A#<acct>#<type>#<id> / T`: `{ record, type, deleted_at, purge_at, ttl, merged_into? }`
 *   (`record`: the stored record as it was), GSI1 `A#<acct>#trash#<type> / <deleted_at>#<id>`:
 *   the account's trash of one type, most recently deleted first. Written in the deletion's
 *   transaction; removed by a restore (in the restore's transaction) or by the table's TTL.
 * - cascade record `A#<acct>#<target>#<targetId> / C#<type>#<id>#<field>`: `{ type, id, field,
 *   after, pos, dver, ttl }`, written in the same transaction as the cascade's update of that
 *   record: the value the cascade wrote (`after`), where the id stood (`pos`, id arrays) and the
 *   deleted record's version (`dver`). A restore re-links only where the field still is `after`.
 * - merge item `A#<acct>#<type>#<secondary> / M`: `{ primary_id, record (the primary after the
 *   merge), actor, step, after, round, done }`: the progress of the re-pointing of the
 *   secondary's links, advanced one bounded chunk per stream record (`repointMerge` in shared/domain/records/merge.ts).
 */
import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config/env.js';
import { db, tableName } from './client.js';
import { afterCursor, eq, itemOf, merge, pageOf, partition, project, update, version } from './expr.js';
import { batchGetItems, batchWriteItems, recordOf, type StoredRecord, type TransactItem, writeUnlessRefused } from './items.js';
import { readPartition } from './lists.js';
import { type EntityType, keys, metaAttr, TABLE_DEFINITION } from './table.js';

const DEFAULT_RETENTION_DAYS = 30;

/** `TRASH_RETENTION_DAYS` (default 30; fractions allowed, for tests) in seconds. */
export function trashRetentionSeconds(): number {
  const days = Number(optionalEnv('TRASH_RETENTION_DAYS') ?? DEFAULT_RETENTION_DAYS);
  return Math.max(1, Math.round((Number.isFinite(days) && days > 0 ? days : DEFAULT_RETENTION_DAYS) * 86_400));
}

export interface TrashItem {
  type: EntityType;
  record: StoredRecord;
  deleted_at: string;
  purge_at: string;
  ttl: number;
  merged_into?: string;
  /** Its position in the account's trash listing (deleted_at#…), as stored. */
  gsi1sk?: string;
}


/** The trash item of a record being deleted (part of the deletion's transaction). */
export function trashPut(accountId: string, type: EntityType, current: StoredRecord, deletedAt: string, mergedInto?: string): TransactItem {
  const purgeAt = Date.parse(deletedAt) + trashRetentionSeconds() * 1000;
  const ttl = Math.ceil(purgeAt / 1000);
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.trash(accountId, type, current.id),
        ...keys.trashGsi(accountId, type, deletedAt, current.id),
        type,
        record: recordOf(current),
        deleted_at: deletedAt,
        purge_at: new Date(purgeAt).toISOString(),
        [TABLE_DEFINITION.ttlAttribute]: ttl,
        ...(mergedInto ? { merged_into: mergedInto } : {}),
      },
    },
  };
}

/** The trash item (with its listing position) while not past its purge time. */
const live = (item: Record<string, unknown> | undefined): TrashItem | undefined =>
  item && Number(item[TABLE_DEFINITION.ttlAttribute]) > Date.now() / 1000
    ? { ...itemOf<TrashItem>(item), ...(typeof item.gsi1sk === 'string' ? { gsi1sk: item.gsi1sk } : {}) }
    : undefined;

/** A trashed record (undefined when absent or past its purge time: the TTL may lag). */
export async function getTrash(accountId: string, type: EntityType, id: string): Promise<TrashItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.trash(accountId, type, id), ConsistentRead: true }));
  return live(out.Item);
}

/** Which of these ids are in the trash (strongly consistent). */
export async function trashedIds(accountId: string, type: EntityType, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await batchGetItems([...new Set(ids)].map((id) => keys.trash(accountId, type, id)), { consistent: true });
  return new Set(found.flatMap((item) => (live(item) ? [String((item.record as StoredRecord).id)] : [])));
}

/** The removal of a record's trash item, for a transaction (an erasure's purge, contract §18). */
export function trashDelete(accountId: string, type: EntityType, id: string): TransactItem {
  return { Delete: { TableName: tableName(), Key: keys.trash(accountId, type, id) } };
}

/** Removes a record's trash item and, when its re-pointing is done, the merge item it was the secondary of (an erasure, contract §18). */
export async function purgeTrash(accountId: string, type: EntityType, id: string): Promise<boolean> {
  const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.trash(accountId, type, id), ReturnValues: 'ALL_OLD' }));
  await purgeMerge(accountId, type, id);
  return Boolean(out.Attributes);
}

/**
 * Removes a finished merge item (it holds the primary's image at the merge); one still
 * re-pointing is left to finish (its TTL removes it). Its REMOVE raises nothing (shared/db/changes.ts).
 */
export async function purgeMerge(accountId: string, type: EntityType, secondaryId: string): Promise<void> {
  await writeUnlessRefused({ Delete: { TableName: tableName(), Key: keys.merge(accountId, type, secondaryId), ...eq('done', true) } });
}

/** Removes a pending rename/deletion of `id` from the account's META (a restored record is current again). */
export function clearOverrideItem(accountId: string, type: EntityType, id: string): TransactItem {
  return { Update: { TableName: tableName(), Key: keys.accountMeta(accountId), ...update({ remove: [metaAttr.override(type, id)] }) } };
}

/**
 * One page of the account's trash of the given types, most recently deleted first, strictly
 * after `after` (`<deleted_at>#<id>`): a k-way merge of one GSI1 partition per type, each read
 * `limit + 1` at a time, so a page reads at most (limit + 1) × types items.
 */
export async function listTrash(accountId: string, types: readonly EntityType[], after: string | undefined, limit: number): Promise<{ items: TrashItem[]; next?: string }> {
  const want = limit + 1;
  const g = TABLE_DEFINITION.gsi1;
  const readers = types.map((type) =>
    readPartition(
      { IndexName: g.name, ...partition(keys.trashPartition(accountId, type), undefined, 'gsi1') },
      g.sortKey,
      after,
      want,
    )[Symbol.asyncIterator](),
  );
  const heads = await Promise.all(readers.map((r) => r.next()));
  const out: TrashItem[] = [];
  while (out.length < want) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h.done) continue;
      if (best < 0 || String(h.value.gsi1sk) > String((heads[best]!.value as Record<string, unknown>).gsi1sk)) best = i;
    }
    if (best < 0) break;
    const item = live(heads[best]!.value as Record<string, unknown>);
    if (item) out.push(item);
    // A reader reads its next page only when the page still needs an item from it.
    if (out.length < want) heads[best] = await readers[best]!.next();
  }
  await Promise.all(readers.map((r) => r.return?.(undefined)));
  return pageOf(out, limit, (t) => String(t.gsi1sk));
}

// --- cascade records ------------------------------------------------------------------------

export interface CascadeRecord {
  type: EntityType;
  id: string;
  field: string;
  /** The value the cascade wrote. */
  after: unknown;
  /** Where the removed id stood in an id array (-1 for a single reference). */
  pos: number;
  /** The deleted record's version when it was deleted. */
  dver: number;
}

/** The record of one cascade update (part of that update's transaction). */
export function cascadeRecordPut(accountId: string, target: EntityType, targetId: string, rec: CascadeRecord): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.cascadeLog(accountId, target, targetId, rec.type, rec.id, rec.field), ...rec, [TABLE_DEFINITION.ttlAttribute]: Math.floor(Date.now() / 1000) + trashRetentionSeconds() },
    },
  };
}

/** Up to `limit` cascade records of a deleted record (the first ones; a caller removes those it has handled). */
export async function readCascadeRecords(accountId: string, target: EntityType, targetId: string, limit: number): Promise<Array<CascadeRecord & { pk: string; sk: string }>> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...partition(keys.cascadeLogPartition(accountId, target, targetId), ['begins_with', keys.cascadeLogPrefix]),
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []) as Array<CascadeRecord & { pk: string; sk: string }>;
}

export async function deleteCascadeRecords(items: Array<{ pk: string; sk: string }>): Promise<void> {
  await batchWriteItems(items.map((i) => ({ DeleteRequest: { Key: { pk: i.pk, sk: i.sk } } })));
}

// --- merges ---------------------------------------------------------------------------------

export interface MergeItem {
  primary_id: string;
  secondary_id: string;
  record: StoredRecord;
  /** Which referencing partition the re-pointing is at, and the last sort key handled there. */
  step: number;
  after: string;
  round: number;
  done: boolean;
  /** The version of the secondary's META override (a deletion's), removed when every link has moved. */
  ov: number;
}

/** The merge item (part of the secondary's deletion transaction): its insert raises `<type>.merged`. */
export function mergePut(accountId: string, type: EntityType, secondary: StoredRecord, primary: StoredRecord, actor: unknown): TransactItem {
  const secondaryId = secondary.id;
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.merge(accountId, type, secondaryId),
        [TABLE_DEFINITION.entityTypeAttribute]: type,
        account_id: accountId,
        primary_id: primary.id,
        secondary_id: secondaryId,
        record: recordOf(primary),
        actor,
        step: 0,
        after: '',
        round: 0,
        done: false,
        ov: secondary.ver + 1,
        [TABLE_DEFINITION.ttlAttribute]: Math.floor(Date.now() / 1000) + trashRetentionSeconds(),
      },
    },
  };
}

/** A condition in a transaction: the record exists at the version read (the primary of a merge that does not change it). */
export function recordVersionCheck(accountId: string, type: EntityType, id: string, ver: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: tableName(),
      Key: keys.record(accountId, type, id),
      ...version(ver),
    },
  };
}

export async function getMerge(accountId: string, type: EntityType, secondaryId: string): Promise<MergeItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.merge(accountId, type, secondaryId), ConsistentRead: true }));
  return out.Item as MergeItem | undefined;
}

/**
 * Records the progress of a merge's re-pointing (conditional on the round read, so a replayed
 * stream record never moves it twice). The update is itself a stream record: the next chunk.
 */
export async function advanceMerge(accountId: string, type: EntityType, secondaryId: string, round: number, next: { step: number; after: string } | 'done'): Promise<void> {
  const done = next === 'done';
  await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.merge(accountId, type, secondaryId),
      ...update({ set: { round: round + 1, step: done ? 0 : next.step, after: done ? '' : next.after, done } }, eq('round', round)),
    },
  });
}

/** Sort keys and ids of a partition's entries after `after`, ascending, at most `limit`. */
export async function partitionEntriesAfter(pk: string, after: string, limit: number): Promise<Array<{ sk: string; id: string }>> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...merge(afterCursor(pk, after, { forward: true }), project('sk', 'id')),
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ sk: String(i.sk), id: String(i.id) }));
}
