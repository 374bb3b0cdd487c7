/** Deleting a record (to the trash when the family has one, contract §15). */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { setOverrideItem } from '../../db/meta.js';
import type { EntityType } from '../../db/table.js';
import { trashPut } from '../../db/trash.js';
import { actorOf, type OperationContext } from '../context.js';
import { notFoundOf, type RecordFamily, writing } from './family.js';
import { deleteOptimistic } from './optimistic.js';
import { trashStage } from './trash-stage.js';

/**
 * Deletes a record: its `*.deleted` event and cascades follow from the stream as always; a
 * family with a trash (contract §15) keeps the record's last image in the trash item, written in
 * the same transaction (`mergedInto`: the deletion is the secondary's side of a merge).
 */
export async function trashOrDelete(
  fam: RecordFamily,
  ctx: OperationContext,
  id: string,
  more?: (current: StoredRecord) => TransactItem[],
  mergedInto?: { id: string; name: string },
): Promise<StoredRecord | undefined> {
  const type = fam.def.type as EntityType;
  return writing(fam, () =>
    deleteOptimistic(fam.store, {
      accountId: ctx.accountId,
      id,
      extra: (current, now = new Date().toISOString()) => [
        // Reads stop showing a deleted record's name at once; a merged one shows as its primary.
        ...(fam.named ? [setOverrideItem(ctx.accountId, type, id, mergedInto ? mergedInto.name : null, current.ver + 1, mergedInto?.id)] : []),
        ...(fam.def.trash ? [trashPut(ctx.accountId, type, current, now, mergedInto?.id)] : []),
        ...(trashStage.deleted?.(ctx.accountId, current, now) ?? []),
        ...(more?.(current) ?? []),
      ],
      actor: actorOf(ctx),
    }),
  );
}

export async function remove(fam: RecordFamily, ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const old = await trashOrDelete(fam, ctx, id);
  if (!old) throw notFoundOf(fam);
  return { deleted: true };
}
