/**
 * Writes of records with their index entries: create, partial update with optimistic locking
 * (the domain reads, decides and writes again after a lost race: shared/domain/records/
 * optimistic.ts), delete, restore. Every write is one transaction
 * (an update that moves no index entry: one conditional UpdateItem), but for an update's
 * sort-ordered entries, written beside it.
 * Internal to the data layer: the record store (record-store.ts) is their only caller.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { billedItemSize, isMeasuring, itemSize } from './capacity.js';
import { db, tableName } from './client.js';
import { batchGetItems, cancellationCodes, isConditionFailure, recordOf, type StoredRecord, type TransactItem } from './items.js';
import { type EntityType, keys, orderKey, RESTORED_ATTR, TABLE_DEFINITION } from './table.js';
import type { IndexedCustom } from './record-model.js';
import { type AccountMeta, readRecordWithMeta } from './meta.js';
import type { TrashItem } from './trash.js';
import { deletionItem } from './events.js';
import { eq, type Expr, is, notExists, or, type Path, update as updateExpr, version } from './expr.js';
import type { Actor } from '../schemas/events.js';
import { CUSTOM_FIELD_PREFIX } from '../schemas/filter.js';
import { backoff } from '../backoff.js';

export interface EntityModel {
  type: EntityType;
  /** Names of the index partitions this record belongs to (`t#tag`, `c#company`, `w#prefix`, …). */
  indexNames(record: Record<string, unknown>): string[];
  /** Sort-ordered entries (contract §17) of a record: sort key by field, the account's indexed custom fields included. */
  sortedEntries(record: Record<string, unknown>, custom: IndexedCustom): Record<string, string>;
  /** The account's indexed custom fields (read before each write of a family with custom fields). */
  indexedCustom(accountId: string): Promise<IndexedCustom>;
  /** The family has custom fields: its writes keep the entries of the account's indexed ones (`indexedCustom`). */
  customFields?: boolean;
}

const MAX_TRANSACT_ITEMS = 100;

/**
 * A lost optimistic-locking race: the record changed since it was read. `lost`: the sort-ordered
 * entries an update put beside its write, for the next read to withdraw (`readForUpdate`).
 */
export class WriteConflict extends Error {
  constructor(
    readonly lost?: LostRace,
    options?: ErrorOptions,
  ) {
    super('write conflict', options);
  }
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
    if (codes && (codes.includes('ConditionalCheckFailed') || codes.includes('TransactionConflict'))) throw new WriteConflict(undefined, { cause: error });
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

/** A sort-ordered entry: the record's id and list position, and the record version that wrote it (`ver`: see `writeUpdate`). */
const sortedItem = (accountId: string, type: EntityType, field: string, at: string, r: { created_at: string; id: string; ver?: unknown }) => ({
  ...keys.sortedEntry(accountId, type, field, at),
  id: r.id,
  pos: orderKey(r.created_at, r.id),
  ...(typeof r.ver === 'number' ? { ver: r.ver } : {}),
});
const sortedDelete = (accountId: string, type: EntityType, field: string, at: string): TransactItem => ({
  Delete: { TableName: tableName(), Key: keys.sortedEntry(accountId, type, field, at) },
});

const STAGE_FIELD = TABLE_DEFINITION.gsi2.stageField;
/** The GSI2 attributes of a record in a pipeline stage (its stage's records, newest first); none outside one. */
const stageKeys = (accountId: string, type: EntityType, r: Record<string, unknown>) => {
  const stage = r[STAGE_FIELD];
  return typeof stage === 'string' && stage !== '' ? keys.stageGsi(accountId, type, stage, String(r.created_at), String(r.id)) : undefined;
};

/** The sort-ordered entries of a record as items (a create, a restore, a bulk create). */
export function sortedItems(model: EntityModel, accountId: string, r: { created_at: string; id: string } & Record<string, unknown>, custom: IndexedCustom) {
  return Object.entries(model.sortedEntries(r, custom)).map(([field, at]) => sortedItem(accountId, model.type, field, at, r));
}

export interface CreateArgs {
  accountId: string;
  userId: string;
  fields: Record<string, unknown>;
  /** Condition checks (e.g. the referenced company still at the version read). */
  checks?: TransactItem[];
  /** The record's creation time; default now. */
  now?: string;
  /** The record's id; default a random UUID. */
  id?: string;
  /** Who writes it (stored as `actor`, so the stream's image carries it into the change log). */
  actor?: Actor;
}

/** The items of a new record: the record itself and its index entries (also used by seeding tools). */
export function newRecordItems(model: EntityModel, args: Omit<CreateArgs, 'checks'>, now: string = new Date().toISOString(), id: string = randomUUID(), custom: IndexedCustom = {}) {
  const base = { id, account_id: args.accountId, created_by: args.userId, ...args.fields, ...(args.actor ? { actor: args.actor } : {}), created_at: now, updated_at: now };
  const idx = model.indexNames(base);
  const record = { ...base, ver: 1, idx } as StoredRecord;
  const item = {
    ...keys.record(args.accountId, model.type, id),
    ...keys.recordGsi(args.accountId, model.type, now, id),
    ...stageKeys(args.accountId, model.type, record),
    ...record,
    [TABLE_DEFINITION.entityTypeAttribute]: model.type,
  };
  const entries = [...idx.map((name) => ({ ...keys.indexEntry(args.accountId, model.type, name, now, id), id })), ...sortedItems(model, args.accountId, record, custom)];
  return { record, item, entries };
}

export async function createRecord(model: EntityModel, args: CreateArgs): Promise<StoredRecord> {
  const custom = await model.indexedCustom(args.accountId);
  const { record, item, entries } = newRecordItems(model, args, args.now, args.id, custom);
  const items: TransactItem[] = [
    ...(args.checks ?? []),
    { Put: { TableName: tableName(), Item: item, ...notExists() } },
    ...entries.map((Item) => ({ Put: { TableName: tableName(), Item } })),
  ];
  // A transaction conflict with no failed condition (another transaction held one of the items,
  // e.g. DynamoDB Local under concurrent writers) is retried: nothing was written, and the new
  // record's items are its own. A failed condition is not retried (it is the caller's conflict).
  for (let attempt = 0; ; attempt++) {
    try {
      await guarded(() => transact(items));
      await settleIndexed(model, args.accountId, custom, [{ id: record.id, images: [record] }]);
      return record;
    } catch (error) {
      const codes = error instanceof WriteConflict ? cancellationCodes((error as Error).cause) : undefined;
      const onlyConflict = codes !== undefined && codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
      if (!onlyConflict || attempt >= 8) throw error;
      await backoff(attempt, 10, 250);
    }
  }
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

/**
 * The requests of one update (pure, tested offline): the record's UpdateItem, guarded by its
 * version and writing only the changed fields and custom-field keys, plus the index entries to
 * put and to delete.
 */
export function planUpdate(model: EntityModel, accountId: string, current: StoredRecord, change: Change, now: string, actor?: Actor, indexed: IndexedCustom = {}) {
  const custom = { ...((current.custom_fields ?? {}) as Record<string, unknown>), ...change.customSet };
  for (const k of change.customRemove ?? []) delete custom[k];
  const draft = { ...current, ...change.set, custom_fields: custom, updated_at: now, ...(actor ? { actor } : {}) };
  const idx = model.indexNames(draft);
  const next = { ...draft, ver: current.ver + 1, idx } as StoredRecord;
  const addedNames = idx.filter((n) => !current.idx.includes(n));
  const removedNames = current.idx.filter((n) => !idx.includes(n));
  // Sort-ordered entries: only those whose key changed, each a put and a delete beside the write (`beside`).
  const sortedBefore = model.sortedEntries(current, indexed);
  const sortedAfter = model.sortedEntries(next, indexed);
  const moved = Object.keys(sortedAfter).filter((f) => sortedBefore[f] !== sortedAfter[f]);
  // A stage change moves the record in GSI2 (its keys set, or removed when it leaves its pipeline).
  const staged = current[STAGE_FIELD] !== next[STAGE_FIELD] ? stageKeys(accountId, model.type, next) : undefined;
  const unstaged = current[STAGE_FIELD] !== next[STAGE_FIELD] && !staged ? [TABLE_DEFINITION.gsi2.partitionKey, TABLE_DEFINITION.gsi2.sortKey] : [];

  // Only what changed: the version and stamp, the changed fields and custom-field keys, and the
  // index names when an entry moves; guarded by the version read (the optimistic lock).
  const set: [Path, unknown][] = [
    ['ver', next.ver],
    ['updated_at', now],
    ...(actor ? [['actor', actor] as [Path, unknown]] : []),
    ...Object.entries(change.set ?? {}),
    ...Object.entries(change.customSet ?? {}).map(([k, v]): [Path, unknown] => [['custom_fields', k], v]),
    ...(addedNames.length || removedNames.length ? [['idx', idx] as [Path, unknown]] : []),
    ...Object.entries(staged ?? {}),
  ];
  const remove: Path[] = [...(change.customRemove ?? []).map((k): Path => ['custom_fields', k]), ...unstaged];
  const update = { TableName: tableName(), Key: keys.record(accountId, model.type, current.id), ...updateExpr({ set, remove }, version(current.ver)) };
  return {
    next,
    update,
    added: addedNames.map((n) => indexPut(accountId, model.type, n, current)),
    removed: removedNames.map((n) => indexDelete(accountId, model.type, n, current)),
    beside: {
      put: moved.map((f) => ({ field: f, item: sortedItem(accountId, model.type, f, sortedAfter[f]!, next) })),
      remove: moved.flatMap((f) => (sortedBefore[f] === undefined ? [] : [keys.sortedEntry(accountId, model.type, f, sortedBefore[f])])),
    },
  };
}

/*
 * An update's sort-ordered entries are written beside its write, not in its transaction:
 * `updated_at` is a sorted field and changes with every update, so in the transaction every
 * update would be one (+4 WCU, and slower concurrent writers of one record). 1 WCU each: 2 per
 * moved field, and an update that moves no other index entry stays one conditional UpdateItem.
 *
 * - The new entries are put before the record's write, so a record is never without the entry of
 *   its current value. Each carries the version it is written for (`ver`), and a put never
 *   replaces an entry of a later version (two writers of the same value write the same item).
 * - The old ones are deleted after the write, unless a later version wrote the same key again
 *   meanwhile (a value set back: A → B by one writer, B → A by the next).
 * - A lost race deletes the entries it put, unless the record now holds that value (the winner
 *   wrote the same key), and only while they are still its own version's.
 * - An entry left by a crash in between is skipped by reads (`holdsEntry` in lists.ts: its record
 *   no longer holds that value).
 */
type BesideEntry = { field: string; item: Record<string, unknown> };
/** Conditional writes of entries beside a record's write; a refused condition is an answer (the entry is another version's). */
async function sendBeside(writes: Promise<unknown>[]): Promise<void> {
  await Promise.all(
    writes.map((write) =>
      write.catch((error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      }),
    ),
  );
}
/** The entry is of no version, or of a version before `ver` (`upTo`: or of `ver` itself). */
const olderThan = (ver: unknown, upTo = false) => or(notExists('ver'), is('ver', upTo ? '<=' : '<', ver));
const putBeside = (entries: BesideEntry[]) => sendBeside(entries.map(({ item }) => db().send(new PutCommand({ TableName: tableName(), Item: item, ...or(notExists(), olderThan(item.ver)) }))));
const deleteBeside = (itemKeys: Record<string, unknown>[], condition: Expr) => sendBeside(itemKeys.map((Key) => db().send(new DeleteCommand({ TableName: tableName(), Key, ...condition }))));
/** The entries a losing update put beside its write, and the version they were written for. */
export interface LostRace {
  put: BesideEntry[];
  ver: number;
}

/** After a lost race: the entries it put that the record (`now`, as read since) does not hold, while still of its version. */
async function withdrawBeside(model: EntityModel, accountId: string, now: StoredRecord | undefined, custom: IndexedCustom, lost: LostRace): Promise<void> {
  if (!lost.put.length) return;
  const held = now ? model.sortedEntries(now, custom) : {};
  const stray = lost.put.filter(({ field, item }) => keys.sortedEntry(accountId, model.type, field, held[field] ?? '').sk !== item.sk);
  await deleteBeside(stray.map(({ item }) => ({ pk: item.pk, sk: item.sk })), version(lost.ver)).catch(() => undefined);
}

/**
 * What an update decides on: the record as read, the account's META item read with it (`meta`:
 * the API view's names and hidden fields) and its indexed custom fields (`custom`: none for a
 * family without custom fields).
 */
export interface UpdateRead {
  current: StoredRecord;
  custom: IndexedCustom;
  meta: AccountMeta;
}

/**
 * An update's read: the record and the account's META item in one strongly consistent
 * BatchGetItem (the only read of META an update makes), or undefined when the record does not
 * exist. `lost`: the previous attempt's lost race, whose entries this read tells to withdraw
 * (one read for both).
 */
export async function readForUpdate(model: EntityModel, accountId: string, id: string, lost?: LostRace): Promise<UpdateRead | undefined> {
  const { record: current, meta } = await readRecordWithMeta(model.type, accountId, id);
  const custom = model.customFields ? meta.indexed : {};
  if (lost) await withdrawBeside(model, accountId, current, custom, lost);
  return current ? { current, custom, meta } : undefined;
}

/** After the last lost race of an update that gives up: its entries, against the record as it is now. */
export async function withdrawLostRace(model: EntityModel, accountId: string, id: string, lost: LostRace): Promise<void> {
  await readForUpdate(model, accountId, id, lost).catch(() => undefined);
}

/**
 * An update decided: the new image and the requests that write it (`planUpdate`). `customChanged`:
 * it sets or removes custom field values (only then can an indexed field turned on or off during
 * the write leave its entry wrong: `settleIndexed`).
 */
export type PlannedUpdate = ReturnType<typeof planUpdate> & { current: StoredRecord; accountId: string; custom: IndexedCustom; customChanged: boolean };

/** The update of `read` by `change` (pure), or undefined when it would change nothing. */
export function prepareUpdate(model: EntityModel, accountId: string, read: UpdateRead, change: Change | undefined, now: string, actor?: Actor): PlannedUpdate | undefined {
  const effective = change && effectiveChange(read.current, change);
  if (!effective) return undefined;
  const customChanged = Object.keys(effective.customSet ?? {}).length > 0 || (effective.customRemove ?? []).length > 0;
  return { ...planUpdate(model, accountId, read.current, effective, now, actor, read.custom), current: read.current, accountId, custom: read.custom, customChanged };
}

/**
 * Writes a planned update with `extra` items in its transaction: one conditional UpdateItem when
 * no index entry of the record moves and there is no `extra`, else one transaction; sort-ordered
 * entries beside it. Throws WriteConflict (carrying the entries it put) when the record changed
 * since it was read.
 */
export async function writeUpdate(model: EntityModel, plan: PlannedUpdate, extra: TransactItem[] = []): Promise<StoredRecord> {
  const { current, next, update, added, removed, beside } = plan;
  if (isMeasuring()) billedItemSize.set(update, Math.max(itemSize(current), itemSize(next)));
  await putBeside(beside.put);
  try {
    if (added.length === 0 && removed.length === 0 && extra.length === 0) {
      await guarded(() => db().send(new UpdateCommand(update)).then(() => undefined));
    } else {
      await guarded(() => transact([{ Update: update }, ...extra, ...added, ...removed]));
    }
  } catch (error) {
    // After any other error the write may have happened, and the entries stay.
    if (error instanceof WriteConflict) throw new WriteConflict({ put: beside.put, ver: next.ver });
    throw error;
  }
  // Both after the write and independent of each other: one round trip, not two. An update that
  // leaves every custom field value as it was keeps every custom field's entry where it was (an
  // entry's key is its value and the record's position), so only one that changed one settles.
  await Promise.all([
    deleteBeside(beside.remove, olderThan(next.ver)),
    plan.customChanged ? settleIndexed(model, plan.accountId, plan.custom, [{ id: next.id, images: [current, next] }]) : undefined,
  ]);
  return next;
}

/**
 * Deletes a record as read (`readForUpdate`) with its index entries and `extra` items, in one
 * transaction. Throws WriteConflict when the record changed since it was read.
 * `actor`: who deletes it, kept beside it for the `*.deleted` event (a REMOVE carries no new image).
 */
export async function writeDelete(model: EntityModel, accountId: string, read: UpdateRead, extra: TransactItem[], actor?: Actor): Promise<StoredRecord> {
  await guarded(() => transact(deletionItems(model, accountId, read.current, extra, actor, read.custom)));
  await settleIndexed(model, accountId, read.custom, [{ id: read.current.id, images: [read.current] }]);
  return read.current;
}

/**
 * The items of a record's deletion (the record, guarded by the version read; `extra`; who
 * deleted it; its index entries), for deleteRecord and for writes that delete a record in their
 * own transaction (a merge's secondary, contract §15).
 */
export function deletionItems(model: EntityModel, accountId: string, current: StoredRecord, extra: TransactItem[], actor?: Actor, custom: IndexedCustom = {}): TransactItem[] {
  return [
    {
      Delete: {
        TableName: tableName(),
        Key: keys.record(accountId, model.type, current.id),
        ...version(current.ver),
      },
    },
    ...extra,
    ...(actor ? [deletionItem(accountId, model.type, current.id, actor)] : []),
    ...current.idx.map((n) => indexDelete(accountId, model.type, n, current)),
    ...Object.entries(model.sortedEntries(current, custom)).map(([f, at]) => sortedDelete(accountId, model.type, f, at)),
  ];
}


/**
 * Brings a trashed record back in one transaction: the record item (same id and `created_at`,
 * `updated_at` now, `rst` = the version it was deleted at, so its insert reads as a restore),
 * its index entries, the removal of the trash item (only if it is still this deletion's) and any
 * extra items. Returns undefined when the trash item is gone or the id is taken meanwhile.
 */
export async function restoreRecord(model: EntityModel, accountId: string, trashed: TrashItem, fields: Record<string, unknown>, now: string, actor: unknown, extra: TransactItem[] = []): Promise<StoredRecord | undefined> {
  const old = trashed.record;
  const custom = await model.indexedCustom(accountId);
  const base = { ...recordOf(old), ...fields, id: old.id, account_id: accountId, created_at: old.created_at, updated_at: now, actor };
  const idx = model.indexNames(base);
  const record = { ...base, ver: Number(old.ver ?? 0) + 1, idx, [RESTORED_ATTR]: Number(old.ver ?? 0) } as StoredRecord;
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.record(accountId, model.type, old.id),
          ...keys.recordGsi(accountId, model.type, old.created_at, old.id),
          ...stageKeys(accountId, model.type, record),
          ...record,
          [TABLE_DEFINITION.entityTypeAttribute]: model.type,
        },
        ...notExists(),
      },
    },
    {
      Delete: {
        TableName: tableName(),
        Key: keys.trash(accountId, model.type, old.id),
        ...eq('deleted_at', trashed.deleted_at),
      },
    },
    ...extra,
    ...idx.map((name) => ({ Put: { TableName: tableName(), Item: { ...keys.indexEntry(accountId, model.type, name, old.created_at, old.id), id: old.id } } })),
    ...sortedItems(model, accountId, record, custom).map((Item) => ({ Put: { TableName: tableName(), Item } })),
  ];
  // The record and the trash item's removal are in the first transaction; index entries beyond
  // one transaction's 100 items (an activity with 100 contacts) follow, as for any large write:
  // reads re-check every record, so an entry written late costs nothing wrong.
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items.slice(0, 100) }));
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes && (codes.includes('ConditionalCheckFailed') || codes.includes('TransactionConflict'))) return undefined;
    throw error;
  }
  for (let i = 100; i < items.length; i += 100) await db().send(new TransactWriteCommand({ TransactItems: items.slice(i, i + 100) }));
  await settleIndexed(model, accountId, custom, [{ id: record.id, images: [record] }]);
  return record;
}

/** A record a write has just written, and the images whose entries it may have left (as read, as written). */
export interface Written {
  id: string;
  images: readonly Record<string, unknown>[];
}

/**
 * After a write: the account's indexed custom fields (contract §17 `indexed`) read again. A write
 * keeps the entries of the fields it read before it; one turned on since may have had its build
 * pass this record before the write committed (the build wrote the old value's entry, or none for
 * a record it did not see yet), and one turned off since may have had its removal pass before the
 * write put an entry. For such fields each written record's entries are set from the record as it
 * is now (strongly consistent): the entry of its value put, the entries of the values this write
 * saw deleted unless a later version wrote them. Again while the fields keep changing (3 rounds
 * at most: a field turned on and off faster than that is settled by the next write).
 * Cost: one strongly consistent GetItem of the account's META item per write of a family with
 * custom fields (none for the others; none for an update that changes no custom field value:
 * `writeUpdate`); the record read and the entries only when a field changed.
 */
export async function settleIndexed(model: EntityModel, accountId: string, seen: IndexedCustom, written: readonly Written[]): Promise<void> {
  let known = seen;
  for (let round = 0; round < 3 && written.length > 0; round++) {
    const now = await model.indexedCustom(accountId);
    const changed = [...new Set([...Object.keys(known), ...Object.keys(now)])].filter((f) => known[f] !== now[f]);
    if (changed.length === 0) return;
    const stored = new Map(
      (await batchGetItems(written.map((w) => keys.record(accountId, model.type, w.id)), { consistent: true })).map((i) => [String(i.id), i as StoredRecord]),
    );
    await Promise.all(
      written.map((w) => {
        const current = stored.get(w.id);
        const ver = Math.max(current?.ver ?? 0, ...w.images.map((i) => Number(i.ver ?? 0)));
        const puts: BesideEntry[] = [];
        const stale = new Map<string, Record<string, unknown>>();
        for (const f of changed) {
          const field = `${CUSTOM_FIELD_PREFIX}${f}`;
          const entryAt = (r: Record<string, unknown>, type: IndexedCustom[string] | undefined) => (type ? model.sortedEntries(r, { [f]: type })[field] : undefined);
          const want = current && entryAt(current, now[f]);
          if (want !== undefined) puts.push({ field, item: sortedItem(accountId, model.type, field, want, current as StoredRecord & { created_at: string }) });
          for (const i of w.images) for (const at of [entryAt(i, known[f]), entryAt(i, now[f])]) if (at !== undefined && at !== want) stale.set(`${field}\u0000${at}`, keys.sortedEntry(accountId, model.type, field, at));
        }
        return Promise.all([putBeside(puts), deleteBeside([...stale.values()], olderThan(ver, true))]);
      }),
    );
    known = now;
  }
}
