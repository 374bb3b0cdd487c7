/**
 * The fan-out of renames and deletions (run by the stream worker, shared/stream/fanout.ts):
 * every record that references a renamed or deleted record is brought up to date through its
 * family's store.
 */
import { clearOverride, overrideAttr, readMeta } from '../../db/meta.js';
import { recordStore, targetReads } from '../../db/record-store.js';
import type { EntityType, ReferenceTarget } from '../../db/table.js';
import { cascadeRecordPut, getTrash } from '../../db/trash.js';
import { entityByType, type EntityDefinition } from '../../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../../schemas/events.js';
import { NAMED_TARGETS } from './family.js';
import { referencesTo, relink } from './referencing.js';
import { updateOptimistic } from './optimistic.js';

/**
 * Brings every record that references a renamed or deleted record up to date: the stored
 * computed name and search entries (rename), or the link (deletion: a single reference becomes
 * null, an id leaves an id array). Each update raises the record's `*.updated` event.
 * Idempotent; when done it removes the meta override that kept reads current meanwhile.
 */
export async function fanOutReference(target: ReferenceTarget, accountId: string, refId: string, kind: 'renamed' | 'deleted', deletedVer?: number): Promise<number> {
  const targetDef = entityByType(target) as EntityDefinition | undefined;
  // Contract §15: a record restored before its deletion's cascade ran keeps its links, and a
  // merged one has them re-pointed to the primary instead (restore.ts, merge.ts).
  const trashable = kind === 'deleted' && Boolean(targetDef?.trash);
  // A member (an owner, an assignee: contract §20) is no record, and is renamed only.
  const reads = targetReads(target);
  if (trashable && ((await reads.get(accountId, refId)) || (await getTrash(accountId, target as EntityType, refId))?.merged_into)) return 0;
  const ref = kind === 'deleted' ? undefined : await reads.get(accountId, refId);
  const meta = NAMED_TARGETS.has(target) ? await readMeta(accountId) : undefined;
  const pending = meta?.overrides.get(overrideAttr(target, refId));
  let changed = 0;
  for (const { entity, ref: field } of referencesTo(target)) {
    if (ref && !field.nameField) continue; // a rename only matters where the name is shown
    const store = recordStore(entity);
    for (const id of await store.referencing(accountId, target, refId)) {
      const updated = await updateOptimistic(store, {
        accountId,
        id,
        actor: SYSTEM_ACTOR,
        // A rename keeps the link and writes the name; a deletion drops the link.
        decide: (current) => relink(field, current, refId, ref ? { id: refId, name: String(ref.name ?? '') } : null),
        // What the cascade wrote, so a restore can undo exactly that (contract §15).
        extra: trashable
          ? (current, next) => {
              const before = current[field.field];
              const pos = field.many && Array.isArray(before) ? (before as string[]).indexOf(refId) : -1;
              return [cascadeRecordPut(accountId, target as EntityType, refId, { type: entity.type as EntityType, id, field: field.field, after: next[field.field] ?? null, pos, dver: deletedVer ?? 0 })];
            }
          : undefined,
      });
      if (updated) changed++;
    }
  }
  if (pending && (ref ? pending.name === ref.name : pending.name === null)) await clearOverride(accountId, target, refId, pending.v);
  return changed;
}
