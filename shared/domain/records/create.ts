/** Creating a record (and reading one): custom fields and references checked, rules, derived fields, then one write. */
import { createRecord } from '../../db/record-store.js';
import type { ParsedBody } from '../../schemas/record-body.js';
import { actorOf, type OperationContext } from '../context.js';
import { checkCustomFields, type CustomFieldEntity } from '../custom-fields.js';
import { checkRules, notFoundOf, type RecordFamily, toApi, writing } from './family.js';
import { type Preloaded, reconcile, resolveRefs } from './references.js';
import { placeRecord } from './placement.js';
import { startSuppressionCheck } from './suppression.js';

export interface CreateOptions {
  /** Read-only fields the caller sets (an inbound email's contact, …). */
  readOnly?: Record<string, unknown>;
  /** The record's id, when the caller decides it (an import chunk's, derived from its row). */
  id?: string;
  /**
   * A create that does not place a record in a pipeline (placing fields refused): an upsert's
   * create. Single and batch creates and imports place (through the projects' hook).
   */
  bulk?: boolean;
}

/** A new record's fields (custom fields and references checked, rules, derived fields): everything of a create but the write. */
export async function draftOf(fam: RecordFamily, ctx: OperationContext, { fields: sent }: ParsedBody, opts: CreateOptions = {}, pre?: Preloaded) {
  const { def, cfField } = fam;
  const now = new Date().toISOString();
  const { [cfField ?? '']: cfInput, ...rest } = sent as Record<string, unknown>;
  const suppressed = startSuppressionCheck(fam, ctx.accountId, rest.email);
  const [cf, refsOut] = await Promise.all([
    cfField ? checkCustomFields(fam.family, ctx.accountId, def.type as CustomFieldEntity, (cfInput ?? {}) as Record<string, unknown>, pre?.definitions) : undefined,
    resolveRefs(fam, ctx.accountId, rest, pre),
  ]);
  const draft: Record<string, unknown> = { ...structuredClone(fam.empty), ...rest, ...refsOut.set, ...(cfField ? { [cfField]: cf!.set } : {}), ...opts.readOnly };
  // A record placed in a pipeline (contract §19) is written with its stage items in one transaction (`checks`).
  const placed = await placeRecord(fam, ctx, opts.id, rest, undefined, now, opts.bulk);
  Object.assign(draft, placed?.set);
  checkRules(fam, draft, Object.keys(sent));
  await suppressed();
  Object.assign(draft, def.derive?.(draft, undefined, now) ?? {});
  return { draft, resolved: refsOut.resolved, now, id: placed?.id, checks: placed?.items };
}

export async function create(fam: RecordFamily, ctx: OperationContext, body: ParsedBody, opts: CreateOptions = {}): Promise<Record<string, unknown>> {
  const { draft, resolved, now, id, checks } = await draftOf(fam, ctx, body, opts);
  // A conflict beyond the data layer's retries is the contract's 409, never a 500.
  const record = await writing(fam, () => createRecord(fam.store, { accountId: ctx.accountId, userId: ctx.userId, fields: draft, now, actor: actorOf(ctx), id, checks }));
  return toApi(fam, await writing(fam, () => reconcile(fam, ctx.accountId, record, resolved, actorOf(ctx))));
}

export async function get(fam: RecordFamily, ctx: OperationContext, id: string): Promise<Record<string, unknown>> {
  const { record, meta } = await fam.store.getWithMeta(ctx.accountId, id);
  if (!record) throw notFoundOf(fam);
  return toApi(fam, record, meta);
}
