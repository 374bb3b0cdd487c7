/**
 * The record store of an entity family (companies, contacts, lead sources, projects,
 * activities): the only code that writes records, their index entries, their search entries and
 * their custom-field values (checked by `npm run depcheck`: nothing outside the data layer's
 * internals imports writes.ts, batch.ts or search.ts). Everything it writes follows from the
 * family's definition (record-model.ts). The domain (shared/domain/records/) holds the rules and
 * tells the store what to write; the stream worker, batches, imports, restores and merges go
 * through the domain's services or this store.
 *
 * Three parts, so that a function's bundle carries the part it calls and not the others
 * (docs/performance.md, "Cold start"): `recordReads(type)` (records by id, for any entity type
 * without its definition: a reference's target, an erasure's contact), `recordStore(def)` (what
 * the record operations and batches write: creates, upsert claims) and `recordUpkeep(def)` (a
 * restore, a merge's deletion, index builds' pages, the stream's search entries). Lists are not
 * the store's: shared/db/lists.ts runs a list plan (`runListPlan`).
 *
 * The steps of an update and a delete are writes.ts's own functions, exported here as they are
 * (no forwarding layer): the domain (shared/domain/records/optimistic.ts) calls each with the
 * family's store, which is its model (`RecordModel`): `readForUpdate` (the record and the account's META item
 * in one read), `prepareUpdate` (the change planned, pure), `writeUpdate`, `withdrawLostRace`,
 * `writeDelete` (docs/architecture.md, "The update path").
 */
import type { EntityDefinition } from '../schemas/entities/index.js';
import type { Actor } from '../schemas/events.js';
import { createRecords, type NewRecord, readClaims, readRecords, releaseClaim, takeClaims, type UpsertClaim } from './batch.js';
import { batchGetRecords, getRecord, queryPartition, type StoredRecord, type TransactItem } from './items.js';
import { type AccountMeta, readIndexedCustom, readRecordWithMeta } from './meta.js';
import { type IndexedCustom, indexNamesOf, searchNamesOf, sortedEntriesOf } from './record-model.js';
import { customField } from '../schemas/entities/index.js';
import { syncSearchEntries } from './search.js';
import { type BuildPage, buildSortedPage, removeSortedPage } from './sorted-index.js';
import type { FieldType } from '../schemas/filter.js';
import { type EntityType, indexName, keys } from './table.js';
import { partitionEntriesAfter, type TrashItem } from './trash.js';
import { type CreateArgs, createRecord, deletionItems, type EntityModel, newRecordItems, restoreRecord, settleIndexed } from './writes.js';

export {
  type Change,
  type LostRace,
  prepareUpdate,
  readForUpdate,
  type UpdateRead,
  withdrawLostRace,
  WriteConflict,
  writeDelete,
  writeUpdate,
} from './writes.js';
export type { UpsertClaim } from './batch.js';

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

    /**
     * The upsert claims of normalized lookup keys (contract §13), strongly consistent: read before
     * an upsert looks for its match, so that taking a claim (`takeClaims`) fails when another
     * upsert took it after that.
     */
    readClaims: (accountId: string, lookupKeys: readonly string[]): Promise<Map<string, UpsertClaim>> => readClaims(type, accountId, lookupKeys),
    /** Takes a key's claim for a record about to be created by an upsert; false when another upsert took it since `seen` was read. */
    takeClaims: (accountId: string, claims: ReadonlyArray<{ key: string; seen: UpsertClaim; id: string }>): Promise<Set<string>> => takeClaims(type, accountId, claims),
    /** Releases a key's claim held by `id` (an erasure). */
    releaseClaim: (accountId: string, lookupKey: string, id: string): Promise<void> => releaseClaim(type, accountId, lookupKey, id),

    // --- writes ---
    /** A new record with its index entries, with `checks` in the same transaction. */
    create: (args: CreateArgs): Promise<StoredRecord> => createRecord(model, args),
    /** New records in bulk (entries first, then records); `skipExisting` keeps records whose id exists. */
    createMany: (records: readonly NewRecord[], opts: { skipExisting?: boolean } = {}): Promise<StoredRecord[]> => createRecords(model, records, opts),
    /** The items of a new record without writing them (seeding tools write them in bulk). */
    newItems: (args: Omit<CreateArgs, 'checks'>, now?: string, id?: string) => newRecordItems(model, args, now, id),
  };
}

export type RecordStore = ReturnType<typeof makeRecordStore>;

/** The store of a family (one per definition). */
export const recordStore: (def: EntityDefinition) => RecordStore = perDefinition(makeRecordStore);

/**
 * The writes of a family that no create, update, delete or batch runs: a restore and a merge's
 * deletion (contract §15), the pages of an index build (§17), the search entries the stream keeps
 * in step. Apart from `recordStore` so that the bundles of the record operations do not carry them.
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
    /** Brings a trashed record back with its index entries; undefined when the trash item is gone or the id is taken. */
    restore: (accountId: string, trashed: TrashItem, fields: Record<string, unknown>, now: string, actor: unknown, extra: TransactItem[] = []): Promise<StoredRecord | undefined> =>
      restoreRecord(model, accountId, trashed, fields, now, actor, extra),
    /**
     * An index build's page (contract §17): the sort-ordered entries of custom field `fieldId`
     * for the records after `after` (oldest first), each checked against the record as it is
     * once written. Run once the field is among the account's indexed fields.
     */
    buildSorted: (accountId: string, fieldId: string, fieldType: FieldType, after: string | undefined, limit: number): Promise<BuildPage> => buildSortedPage(type, accountId, fieldId, fieldType, after, limit),
    /** Deletes a page of custom field `fieldId`'s sort-ordered entries (its `indexed` turned off, or the definition deleted). */
    removeSorted: (accountId: string, fieldId: string, limit: number): Promise<BuildPage> => removeSortedPage(type, accountId, fieldId, limit),
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
