/**
 * Restores (contract §15): `restore` brings a trashed record back; `undoCascades` (run by the
 * stream worker on the restored record's insert) re-links the records its deletion's cascade
 * unlinked, where the field is still the value the cascade wrote (its cascade records,
 * shared/db/trash.ts), then removes those records. Idempotent: a replay finds the link in place
 * or the cascade record gone.
 */
import type { RecordChange } from '../../db/changes.js';
import type { StoredRecord } from '../../db/items.js';
import { readMeta } from '../../db/meta.js';
import { recordStore, restoreRecord } from '../../db/record-store.js';
import { type EntityType, RESTORED_ATTR } from '../../db/table.js';
import { clearOverrideItem, deleteCascadeRecords, getTrash, readCascadeRecords } from '../../db/trash.js';
import { entityByType, type EntityDefinition, refFields } from '../../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../../schemas/events.js';
import { actorOf, type OperationContext } from '../context.js';
import { notFoundOf, type RecordFamily, toApi, writing } from './family.js';
import { reconcile, type Resolved, targetStore } from './references.js';
import { inParallel } from './referencing.js';
import { updateOptimistic } from './optimistic.js';
import { trashStage } from './trash-stage.js';

/** Writes in flight at once while undoing a deletion's cascade. */
const PARALLEL = 16;

/** The restored record's links where the linked record still exists (others dropped, names current). */
async function liveLinks(fam: RecordFamily, accountId: string, stored: Record<string, unknown>): Promise<{ set: Record<string, unknown>; resolved: Resolved[] }> {
  const set: Record<string, unknown> = {};
  const resolved: Resolved[] = [];
  await Promise.all(
    fam.refs.map(async (ref) => {
      const value = stored[ref.field];
      if (ref.many) {
        const ids = Array.isArray(value) ? (value as string[]) : [];
        const found = ids.length ? await targetStore(ref).getMany(accountId, ids) : new Map<string, StoredRecord>();
        const kept = ids.filter((x) => found.has(x));
        set[ref.field] = kept;
        if (kept.length) resolved.push({ field: ref.field, target: ref.target, linked: kept.map((x) => ({ id: x, ver: found.get(x)!.ver, name: String(found.get(x)!.name ?? '') })) });
        return;
      }
      if (typeof value !== 'string' || value === '') return;
      const target = await targetStore(ref).get(accountId, value);
      if (!target) {
        set[ref.field] = null;
        if (ref.nameField) set[ref.nameField] = '';
        return;
      }
      if (ref.nameField) set[ref.nameField] = String(target.name ?? '');
      resolved.push({ field: ref.field, target: ref.target, linked: [{ id: value, ver: target.ver, name: String(target.name ?? '') }] });
    }),
  );
  return { set, resolved };
}

/**
 * Brings a trashed record back: same id, fields and `created_at`, its own links where the
 * linked record still exists (others dropped, names current). The stream worker then undoes
 * the deletion's cascades where nothing changed them since (`undoCascades`).
 */
export async function restore(fam: RecordFamily, ctx: OperationContext, id: string): Promise<Record<string, unknown>> {
  const type = fam.def.type as EntityType;
  const trashed = fam.def.trash ? await getTrash(ctx.accountId, type, id) : undefined;
  if (!trashed) throw notFoundOf(fam);
  const { set, resolved } = await liveLinks(fam, ctx.accountId, trashed.record as Record<string, unknown>);
  const now = new Date().toISOString();
  // A record in a pipeline begins a new visit of its stage (contract §19).
  const placed = await trashStage.restored?.(ctx.accountId, trashed, now, actorOf(ctx));
  const extra = [...(fam.named ? [clearOverrideItem(ctx.accountId, type, id)] : []), ...(placed?.items ?? [])];
  const record = await restoreRecord(fam.store, ctx.accountId, trashed, { ...set, ...placed?.set }, now, actorOf(ctx), extra);
  if (!record) throw notFoundOf(fam);
  const current = await writing(fam, () => reconcile(fam, ctx.accountId, record, resolved, actorOf(ctx)));
  return toApi(fam, current, await readMeta(ctx.accountId));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export async function undoCascades(change: RecordChange): Promise<void> {
  const def = entityByType(change.type) as EntityDefinition | undefined;
  if (!def?.trash || !change.new) return;
  const dver = Number(change.new[RESTORED_ATTR]);
  const restored = await recordStore(def).get(change.accountId, change.id);
  if (!restored || Number(restored[RESTORED_ATTR]) !== dver) return; // deleted again meanwhile: its own deletion decides
  for (;;) {
    const records = await readCascadeRecords(change.accountId, change.type, change.id, 100);
    if (records.length === 0) return;
    await inParallel(records, PARALLEL, async (r) => {
      if (Number(r.dver) !== dver) return; // an older deletion's record
      const entity = entityByType(r.type) as EntityDefinition | undefined;
      const ref = entity && refFields(entity).find((f) => f.field === r.field);
      if (!entity || !ref) return;
      await updateOptimistic(recordStore(entity), {
        accountId: change.accountId,
        id: r.id,
        actor: SYSTEM_ACTOR,
        decide: (current) => {
          if (!same(current[r.field], r.after)) return undefined; // changed since the cascade: left as it is
          if (ref.many) {
            const ids = Array.isArray(current[r.field]) ? [...(current[r.field] as string[])] : [];
            if (ids.includes(change.id) || ids.length >= 100) return undefined;
            ids.splice(r.pos < 0 ? ids.length : Math.min(r.pos, ids.length), 0, change.id);
            return { set: { [r.field]: ids } };
          }
          return { set: { [r.field]: change.id, ...(ref.nameField ? { [ref.nameField]: String(restored.name ?? '') } : {}) } };
        },
      });
    });
    await deleteCascadeRecords(records);
  }
}
