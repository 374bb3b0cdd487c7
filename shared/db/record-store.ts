/**
 * The record store of an entity family (companies, contacts, lead sources, projects,
 * activities): the only code that writes records, their index entries, their search entries and
 * their custom-field values (checked by `npm run depcheck`: nothing outside the data layer's
 * internals imports writes.ts, batch.ts or search.ts). Everything it writes follows from the
 * family's definition (record-model.ts). The domain (shared/domain/records/) holds the rules and
 * tells the store what to write; the stream worker, batches, imports, restores and merges go
 * through the domain's services or this store.
 *
 * The writes are the data layer's own functions, exported here as they are (no forwarding
 * layer, so that a function's bundle carries only what it calls: docs/performance.md, "Cold
 * start"); the domain calls each with the family's store, which is its model (`RecordModel`), or
 * its type: the steps of an update and a delete (shared/domain/records/optimistic.ts:
 * `readForUpdate`, the record and the account's META item in one read; `prepareUpdate`, the
 * change planned, pure; `writeUpdate`; `withdrawLostRace`; `writeDelete`; docs/architecture.md,
 * "The update path"), creates (`createRecord`, `createRecords` in bulk), a restore
 * (`restoreRecord`), upsert claims (`readClaims`, `takeClaims`, `releaseClaim`) and index builds'
 * pages (`buildSortedPage`, `removeSortedPage`).
 *
 * Besides, `recordReads(type)` (records by id, for any entity type without its definition: a
 * reference's target, an erasure's contact), `recordStore(def)` (the model, reads, the reference
 * index) and `recordUpkeep(def)` (a merge's deletion, the stream's search entries). Lists are not
 * the store's: shared/db/lists.ts runs a list plan (`runListPlan`).
 */
import type { EntityDefinition } from '../schemas/entities/index.js';
import type { Actor } from '../schemas/events.js';
import { readRecords } from './batch.js';
import { batchGetItems, batchGetRecords, getRecord, queryPartition, type StoredRecord, type TransactItem } from './items.js';
import { type AccountMeta, readIndexedCustom, readRecordWithMeta } from './meta.js';
import { type IndexedCustom, indexNamesOf, searchNamesOf, sortedEntriesOf } from './record-model.js';
import { customField } from '../schemas/entities/index.js';
import { syncSearchEntries } from './search.js';
import { type EntityType, indexName, keys, type ReferenceTarget } from './table.js';
import { partitionEntriesAfter } from './trash.js';
import { type CreateArgs, deletionItems, type EntityModel, newRecordItems, settleIndexed } from './writes.js';

export {
  type Change,
  createRecord,
  type LostRace,
  prepareUpdate,
  readForUpdate,
  restoreRecord,
  type UpdateRead,
  withdrawLostRace,
  WriteConflict,
  writeDelete,
  writeUpdate,
} from './writes.js';
export { createRecords, readClaims, releaseClaim, takeClaims, type UpsertClaim } from './batch.js';
export { buildSortedPage, removeSortedPage } from './sorted-index.js';

/** Records of one entity type by id: reads that need no definition. */
export function recordReads(type: EntityType) {
  return {
    /** One record, strongly consistent. */
    get: (accountId: string, id: string): Promise<StoredRecord | undefined> => getRecord(type, accountId, id),
    /** One record and the account's meta in one strongly consistent round trip. */
    getWithMeta: (accountId: string, id: string): Promise<{ record: StoredRecord | undefined; meta: AccountMeta }> => readRecordWithMeta(type, accountId, id),
    /** Records by id (BatchGetItem). */
    getMany: (accountId: string, ids: string[]): Promise<Map<string, StoredRecord>> => batchGetRecords(type, accountId, ids),
    /** Records by id, strongly consistent (a batch's reference checks, `-batch-get`). */
    getManyConsistent: (accountId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>> => readRecords(type, accountId, ids),
  };
}

/** Members by id (their items, `keys.member`: contract §20), as a reference's target reads them (`id`, `name`, `status`, `ver`). */
async function membersById(accountId: string, ids: readonly string[], consistent: boolean): Promise<Map<string, StoredRecord>> {
  const items = await batchGetItems([...new Set(ids)].map((id) => keys.member(accountId, id)), { consistent });
  return new Map(items.map((item) => [String(item.id), item as StoredRecord]));
}
const memberReads = {
  get: async (accountId: string, id: string): Promise<StoredRecord | undefined> => (await membersById(accountId, [id], true)).get(id),
  getMany: (accountId: string, ids: string[]): Promise<Map<string, StoredRecord>> => membersById(accountId, ids, false),
  getManyConsistent: (accountId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>> => membersById(accountId, ids, true),
};

/**
 * Reads by id of what a reference field points at: records of an entity type, or members (owners
 * and assignees, contract §20), which are not records but read the same way (`name`, `ver`).
 */
export const targetReads = (target: ReferenceTarget): Pick<ReturnType<typeof recordReads>, 'get' | 'getMany' | 'getManyConsistent'> =>
  target === 'member' ? memberReads : recordReads(target);

/**
 * What every write of a family works from (one per definition, shared by its store, its upkeep
 * and the update steps): the type, the entries of a record, and the account's indexed custom
 * fields (read only for a family with custom fields).
 */
export type RecordModel = EntityModel;

/** `make` once per definition. */
function perDefinition<T>(make: (def: EntityDefinition) => T): (def: EntityDefinition) => T {
  const made = new WeakMap<EntityDefinition, T>();
  return (def) => {
    let out = made.get(def);
    if (out === undefined) made.set(def, (out = make(def)));
    return out;
  };
}

/** The model of a family (one per definition; its store carries it). */
const recordModel = perDefinition((def): RecordModel => {
  const customFields = Boolean(customField(def));
  return {
    type: def.type as EntityType,
    customFields,
    indexNames: (r) => indexNamesOf(def, r),
    sortedEntries: (r, custom) => sortedEntriesOf(def, r, custom),
    indexedCustom: async (accountId) => (customFields ? readIndexedCustom(accountId) : {}),
  };
});

function makeRecordStore(def: EntityDefinition) {
  const model = recordModel(def);
  const { type } = model;
  const refPartition = (accountId: string, target: string, refId: string) => keys.indexPartition(accountId, type, indexName.ref(target as EntityType, refId));
  return {
    // The model: what the update steps (`readForUpdate` …) and every write of the family take.
    ...model,
    // --- reads ---
    ...recordReads(type),
    /** Ids of this family's records that reference `target` `refId` (its reference index partition). */
    async referencing(accountId: string, target: string, refId: string): Promise<string[]> {
      const entries = await queryPartition<{ id: string }>(refPartition(accountId, target, refId), { projection: 'id' });
      return [...new Set(entries.map((e) => String(e.id)))];
    },
    /** The same, in bounded chunks after a sort key (a merge's re-pointing). */
    referencingAfter: (accountId: string, target: string, refId: string, after: string, limit: number) => partitionEntriesAfter(refPartition(accountId, target, refId), after, limit),

    /** The items of a new record without writing them (seeding tools write them in bulk). */
    newItems: (args: Omit<CreateArgs, 'checks'>, now?: string, id?: string) => newRecordItems(model, args, now, id),
  };
}

export type RecordStore = ReturnType<typeof makeRecordStore>;

/** The store of a family (one per definition). */
export const recordStore: (def: EntityDefinition) => RecordStore = perDefinition(makeRecordStore);

/**
 * The writes of a family that no create, update, delete or batch runs: a merge's deletion
 * (contract §15) and the search entries the stream keeps in step. Apart from `recordStore` so that
 * the bundles of the record operations do not carry them.
 */
function makeRecordUpkeep(def: EntityDefinition) {
  const model = recordModel(def);
  const { type } = model;
  return {
    /**
     * A record's deletion inside another write's transaction (a merge deletes its secondary with
     * the primary's update): its `items`, decided on the indexed fields that write read
     * (`custom`: its `UpdateRead`'s), and `settle`, to run once that write committed
     * (`settleIndexed`: a field turned on or off meanwhile).
     */
    deletion(accountId: string, current: StoredRecord, extra: TransactItem[], custom: IndexedCustom, actor?: Actor): { items: TransactItem[]; settle: () => Promise<void> } {
      return { items: deletionItems(model, accountId, current, extra, actor, custom), settle: () => settleIndexed(model, accountId, custom, [{ id: current.id, images: [current] }]) };
    },
    /**
     * Keeps a record's search entries in step with it (the stream worker, from the record's old
     * and new images): the prefixes of the new image the old one lacked are put, the ones it no
     * longer has are deleted (all of them when it is deleted). Idempotent.
     */
    async syncSearch(accountId: string, id: string, old: Record<string, unknown> | undefined, now: Record<string, unknown> | undefined): Promise<void> {
      if (!def.search) return;
      const before = old ? searchNamesOf(def, old) : [];
      const after = now ? searchNamesOf(def, now) : [];
      const image = now ?? old;
      if (!image || typeof image.created_at !== 'string') return;
      await syncSearchEntries({ type, accountId, id, createdAt: image.created_at, put: after.filter((n) => !before.includes(n)), remove: before.filter((n) => !after.includes(n)) });
    },
  };
}

export type RecordUpkeep = ReturnType<typeof makeRecordUpkeep>;

/** The upkeep side of a family's store (one per definition). */
export const recordUpkeep: (def: EntityDefinition) => RecordUpkeep = perDefinition(makeRecordUpkeep);
