/**
 * The hook through which the record writes place a record in a pipeline (contract §19): set by
 * shared/domain/records/stages.ts when a function imports it (the projects' create, update and
 * batch update, the import worker and the stage moves), so that the other families' bundles do
 * not carry the pipelines' code. Where the hook is not set, or the write is a batch create's (its
 * function has no room for that code under the bundle cap), a placing field is refused by the
 * family's definition (`pipeline`), never written raw.
 */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { type Family, invalidRequest } from '../../errors.js';
import type { Actor } from '../../schemas/events.js';
import { actorOf, type OperationContext } from '../context.js';
import type { RecordFamily } from './family.js';

export interface Placement {
  /** Fields to write. */
  set: Record<string, unknown>;
  /** Items of the write's transaction. */
  items: TransactItem[];
  /** A create's record id, decided by the placement (its visit's key) before the write. */
  id?: string;
}

export type PlaceStage = (family: Family, accountId: string, id: string | undefined, sent: Record<string, unknown>, current: StoredRecord | undefined, now: string, actor: Actor) => Promise<Placement | undefined>;

/** A bulk create's draft (shared/domain/batch.ts): `checks` the stage items of one placed in a pipeline. */
export interface PlacedDraft {
  draft: Record<string, unknown>;
  now: string;
  id?: string;
  checks?: TransactItem[];
  record?: StoredRecord;
}

/**
 * How a bulk create (a batch, an import chunk) writes its drafts placed in a pipeline: each as the
 * single create writes it (one transaction with its stage items), `record` set, or `fail` called;
 * with `skipExisting` (an import chunk applied again) one that exists is kept. Set by stages.ts.
 */
export const bulkPlacement: {
  create?: <D extends PlacedDraft>(fam: RecordFamily, ctx: OperationContext, drafts: D[], skipExisting: boolean | undefined, fail: (d: D, error: unknown) => void) => Promise<void>;
} = {};

let hook: PlaceStage | undefined;
export const setPlacement = (place: PlaceStage): void => {
  hook = place;
};

/**
 * Where the write puts the record (see stages.ts): nothing for a family not in pipelines; through
 * the hook when it is set and the write is not a batch create's (`bulk`); else the family's
 * refusal of placing fields.
 */
export async function placeRecord(fam: RecordFamily, ctx: OperationContext, id: string | undefined, sent: Record<string, unknown>, current: StoredRecord | undefined, now = new Date().toISOString(), bulk?: boolean): Promise<Placement | undefined> {
  const refuse = fam.def.pipeline;
  if (refuse && hook && !bulk) return hook(fam.family, ctx.accountId, id, sent, current, now, actorOf(ctx));
  const refused = refuse?.(sent, current);
  if (refused) throw invalidRequest(fam.family, refused);
  return undefined;
}
