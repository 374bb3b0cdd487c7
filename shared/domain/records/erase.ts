/**
 * A record's side of an erasure (contract §18), through its family's store: the record purged
 * with its index entries and its trash item (never to the trash), and the records that existed
 * only for it (activities linked to no other record). Referencing records that stay lose the
 * link by the stream's fan-out of the deletion, as for any delete (`*.updated` events).
 */
import { releaseClaim } from '../../db/record-store.js';
import { readCascadeRecords, deleteCascadeRecords, getTrash, purgeTrash, trashDelete } from '../../db/trash.js';
import type { EntityType } from '../../db/table.js';
import { activityEntity, type EntityDefinition } from '../../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../../schemas/events.js';
import { familyOf, type RecordFamily } from './family.js';
import { deleteOptimistic } from './optimistic.js';
import { normalizeLookupKey } from '../lookups.js';

/**
 * Deletes a record, live or in the trash, for good: the store's delete (the record, its index
 * entries; its search entries follow from the stream) with its trash item in the same
 * transaction, then a trash item left by an earlier deletion and a finished merge's image.
 * Idempotent; true when something was there.
 */
export async function purge(fam: RecordFamily, accountId: string, id: string): Promise<boolean> {
  const type = fam.def.type as EntityType;
  const before = (await fam.store.get(accountId, id)) ?? (await getTrash(accountId, type, id))?.record;
  const live = await deleteOptimistic(fam.store, { accountId, id, extra: () => [trashDelete(accountId, type, id)], actor: SYSTEM_ACTOR });
  const trashed = await purgeTrash(accountId, type, id);
  // The upsert claim of its lookup key (a digest of the address) goes with it.
  const lookup = fam.def.lookup && before ? before[fam.def.lookup.field] : undefined;
  if (typeof lookup === 'string' && lookup !== '') await releaseClaim(fam.store.type, accountId, normalizeLookupKey(lookup.trim()), id);
  return Boolean(live) || trashed;
}

/** Activities purged at once by `purgeOnlyLinked` (each its own items: a contact's many activities do not queue one by one). */
const PURGE_AT_ONCE = 4;

/** The links of a record besides `to` `refId` (every reference field of its family). */
function otherLinks(fam: RecordFamily, record: Record<string, unknown>, target: string, refId: string): number {
  let n = 0;
  for (const ref of fam.refs) {
    const value = record[ref.field];
    const ids = Array.isArray(value) ? (value as unknown[]) : value ? [value] : [];
    n += ids.filter((x) => !(ref.target === target && x === refId)).length;
  }
  return n;
}

/**
 * Deletes (for good, not to the trash) the activities linked to the record and to no other
 * record: those whose reference index names it (it is live), and those its deletion's cascade
 * unlinked (it is in the trash). The cascade's records are removed too (no restore follows).
 * `before` runs before each deletion (an erasure marks the activity and redacts its history),
 * for up to PURGE_AT_ONCE activities at once. Returns how many were deleted.
 */
export async function purgeOnlyLinked(accountId: string, target: EntityType, refId: string, before?: (id: string) => Promise<void>): Promise<number> {
  const fam = familyOf(activityEntity as EntityDefinition);
  const candidates = new Set(await fam.store.referencing(accountId, target, refId));
  const cascades = await readCascadeRecords(accountId, target, refId, 1000);
  for (const c of cascades) if (c.type === fam.def.type) candidates.add(c.id);
  let deleted = 0;
  // Each activity is its own items: PURGE_AT_ONCE of them at a time.
  const ids = [...candidates];
  for (let i = 0; i < ids.length; i += PURGE_AT_ONCE) {
    await Promise.all(
      ids.slice(i, i + PURGE_AT_ONCE).map(async (id) => {
        const current = await fam.store.get(accountId, id);
        if (!current || otherLinks(fam, current, target, refId) > 0) return;
        await before?.(id);
        if (await purge(fam, accountId, id)) deleted++;
      }),
    );
  }
  await deleteCascadeRecords(cascades);
  return deleted;
}
