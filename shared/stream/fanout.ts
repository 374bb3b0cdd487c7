import { clearOverride, overrideAttr, readMeta } from '../db/meta.js';
import { getRecord, queryPartition } from '../db/items.js';
import { updateRecord } from '../db/writes.js';
import { type EntityType, indexName, keys } from '../db/table.js';
import { cascadeRecordPut, getTrash } from '../db/trash.js';
import { modelOf, NAMED_TARGETS } from '../domain/entity-service.js';
import { entityByType } from '../schemas/entities/index.js';
import type { RecordChange } from '../db/changes.js';
import { projectSearch } from './search.js';
import { SYSTEM_ACTOR } from '../schemas/events.js';
import { referencesTo } from './references.js';
import { repointMerge, undoCascades } from './trash.js';

export { referencesTo };

async function referencingIds(entityType: string, accountId: string, target: EntityType, refId: string): Promise<string[]> {
  const entries = await queryPartition<{ id: string }>(keys.indexPartition(accountId, entityType as EntityType, indexName.ref(target, refId)), { projection: 'id' });
  return [...new Set(entries.map((e) => String(e.id)))];
}

/**
 * Brings every record that references a renamed or deleted record up to date: the stored
 * computed name and search entries (rename), or the link (deletion: a single reference becomes
 * null, an id leaves an id array). Each update raises the record's `*.updated` event.
 * Idempotent; when done it removes the meta override that kept reads current meanwhile.
 */
export async function fanOutReference(target: EntityType, accountId: string, refId: string, kind: 'renamed' | 'deleted', deletedVer?: number): Promise<number> {
  // Contract §15: a record restored before its deletion's cascade ran keeps its links, and a
  // merged one has them re-pointed to the primary instead (shared/stream/trash.ts).
  const trashable = kind === 'deleted' && Boolean(entityByType(target)?.trash);
  if (trashable && ((await getRecord(target, accountId, refId)) || (await getTrash(accountId, target, refId))?.merged_into)) return 0;
  const ref = kind === 'deleted' ? undefined : await getRecord(target, accountId, refId);
  const meta = NAMED_TARGETS.has(target) ? await readMeta(accountId) : undefined;
  const pending = meta?.overrides.get(overrideAttr(target, refId));
  let changed = 0;
  for (const { entity, ref: field } of referencesTo(target)) {
    if (ref && !field.nameField) continue; // a rename only matters where the name is shown
    const model = modelOf(entity);
    for (const id of await referencingIds(entity.type, accountId, target, refId)) {
      const updated = await updateRecord(model, {
        accountId,
        id,
        actor: SYSTEM_ACTOR,
        compute: (current) => {
          const value = current[field.field];
          if (field.many) {
            const ids = Array.isArray(value) ? (value as string[]) : [];
            return ids.includes(refId) && !ref ? { set: { [field.field]: ids.filter((x) => x !== refId) } } : undefined;
          }
          if (value !== refId) return undefined;
          if (ref) return { set: { [field.nameField!]: ref.name } };
          return { set: { [field.field]: null, ...(field.nameField ? { [field.nameField]: '' } : {}) } };
        },
        // What the cascade wrote, so a restore can undo exactly that (contract §15).
        extra: trashable
          ? (current, next) => {
              const before = current[field.field];
              const pos = field.many && Array.isArray(before) ? (before as string[]).indexOf(refId) : -1;
              return [cascadeRecordPut(accountId, target, refId, { type: entity.type as EntityType, id, field: field.field, after: next[field.field] ?? null, pos, dver: deletedVer ?? 0 })];
            }
          : undefined,
      });
      if (updated) changed++;
    }
  }
  if (pending && (ref ? pending.name === ref.name : pending.name === null)) await clearOverride(accountId, target, refId, pending.v);
  return changed;
}

/** Projections kept by the stream worker (the webhook pipeline consumes the same changes). */
export async function applyProjections(change: RecordChange): Promise<void> {
  if (change.op === 'merged' || change.op === 'merging') return repointMerge(change);
  await projectSearch(change);
  if (change.op === 'restored') return undoCascades(change);
  if (referencesTo(change.type).length === 0) return;
  if (change.op === 'deleted') await fanOutReference(change.type, change.accountId, change.id, 'deleted', Number(change.old?.ver ?? 0));
  else if (change.op === 'updated' && change.old?.name !== change.new?.name && NAMED_TARGETS.has(change.type)) {
    await fanOutReference(change.type, change.accountId, change.id, 'renamed');
  }
}
