/** Updating a record: custom fields and changed references checked, rules, derived fields, one optimistic write. */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { type AccountMeta, setOverrideItem } from '../../db/meta.js';
import type { UpdateRead } from '../../db/record-store.js';
import type { EntityType } from '../../db/table.js';
import type { ParsedBody } from '../../schemas/record-body.js';
import { actorOf, type OperationContext } from '../context.js';
import { checkCustomFields, type CustomFieldEntity } from '../custom-fields.js';
import { checkRules, notFoundOf, type RecordFamily, toApi, writing } from './family.js';
import { type Preloaded, reconcile, type Resolved, resolveRefs } from './references.js';
import { type Placement, placeRecord } from './placement.js';
import { startSuppressionCheck } from './suppression.js';
import { updateOptimistic } from './optimistic.js';

/**
 * More of the same transaction (a merge deletes its secondary with the primary's update): `load`
 * runs on every attempt; `items` gets the indexed custom fields the update read (`custom`).
 */
export interface AlsoWrite {
  load: () => Promise<void>;
  items: (current: StoredRecord, next: StoredRecord, custom: UpdateRead['custom']) => TransactItem[];
}

/**
 * An update up to the stored record, with the account's META item its read brought (`meta`: what
 * the API view needs, read once); `changed`: false when nothing had to be written.
 */
export async function applyUpdate(fam: RecordFamily, ctx: OperationContext, { id, fields: sent }: ParsedBody, pre?: Preloaded, also?: AlsoWrite): Promise<{ stored: StoredRecord; changed: boolean; meta: AccountMeta }> {
  const { def, cfField } = fam;
  const { [cfField ?? '']: cfInput, ...rest } = sent as Record<string, unknown>;
  const cf = cfField && cfInput ? await checkCustomFields(fam.family, ctx.accountId, def.type as CustomFieldEntity, cfInput as Record<string, unknown>, pre?.definitions) : undefined;
  // Sending a suppressed address is refused even when a record holds it already (a duplicate
  // left by the erasure, an upsert's match): it is never written again (contract §18).
  const suppressed = 'email' in rest ? startSuppressionCheck(fam, ctx.accountId, rest.email) : undefined;
  let resolved: Resolved[] = [];
  let readVer = 0;
  let placed: Placement | undefined;
  const updated = await writing(fam, () =>
    updateOptimistic(fam.store, {
      accountId: ctx.accountId,
      id: id!,
      actor: actorOf(ctx),
      decide: async (current) => {
        readVer = current.ver;
        await also?.load();
        // A member kept as it is needs no check: a deactivated one stays the owner it was (contract §20).
        const changedRefs = Object.fromEntries(Object.entries(rest).filter(([k, v]) => fam.refs.some((r) => r.field === k && !(r.target === 'member' && current[k] === v))));
        const out = await resolveRefs(fam, ctx.accountId, changedRefs, pre);
        resolved = out.resolved;
        placed = await placeRecord(fam, ctx, id!, rest, current);
        const set = { ...rest, ...out.set, ...placed?.set };
        const next = { ...current, ...set };
        checkRules(fam, next, Object.keys(sent));
        await suppressed?.();
        Object.assign(set, def.derive?.(next, current, new Date().toISOString()) ?? {});
        return { set, customSet: cf?.set, customRemove: cf?.remove };
      },
      // A rename shows on every referencing record at once (meta override) while the stream
      // worker rewrites their stored names and search entries.
      extra: (current, next, read) => [
        ...(fam.named && next.name !== current.name ? [setOverrideItem(ctx.accountId, def.type as EntityType, id!, String(next.name), next.ver)] : []),
        ...(also?.items(current, next, read.custom) ?? []),
        ...(placed?.items ?? []),
      ],
    }),
  );
  if (!updated) throw notFoundOf(fam);
  const stored = await writing(fam, () => reconcile(fam, ctx.accountId, updated.record, resolved, actorOf(ctx)));
  return { stored, changed: updated.record.ver !== readVer, meta: updated.meta };
}

export async function update(fam: RecordFamily, ctx: OperationContext, body: ParsedBody): Promise<Record<string, unknown>> {
  const { stored, meta } = await applyUpdate(fam, ctx, body);
  return toApi(fam, stored, meta);
}
