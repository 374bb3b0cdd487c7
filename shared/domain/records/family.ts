/**
 * What every rule of a record family works from, derived once from its definition: the family's
 * store (shared/db/record-store.ts, the one writer of its records), its references, custom-field
 * field, empty values, and the helpers the rules share (the API view, the rules check, the
 * mapping of a lost write race to the contract's 409).
 *
 * Nothing here reads the list of every definition (ENTITIES) but `storeOfType`, which the stream
 * worker calls: a family's functions carry its own definition only (docs/performance.md, "Cold start").
 */
import type { AccountMeta } from '../../db/meta.js';
import { currentView } from '../../db/record-model.js';
import { recordStore, type RecordStore, recordUpkeep, type RecordUpkeep, WriteConflict } from '../../db/record-store.js';
import { ApiError, type Family, notFound } from '../../errors.js';
import { customField, emptyFields, type Entity, entityByType, type EntityDefinition, refFields } from '../../schemas/entities/index.js';
import { NAMED_TYPES } from '../../schemas/entities/type-lists.js';
import { visibleCustomFields } from '../shape.js';

export type Def = EntityDefinition;
export type Ref = ReturnType<typeof refFields>[number];

/** Entity types some other entity shows the current name of (their renames and deletions use meta overrides). */
export const NAMED_TARGETS: ReadonlySet<string> = new Set<string>(NAMED_TYPES);

export interface RecordFamily {
  def: Def;
  family: Family;
  /** The family's store, which is also its model: what the update steps take (`readForUpdate`, `writeUpdate` … of shared/db/record-store.ts). */
  store: RecordStore;
  refs: Ref[];
  cfField: string | undefined;
  empty: Record<string, unknown>;
  /** Other families show this one's name: renames and deletions write a meta override. */
  named: boolean;
}

const families = new WeakMap<Def, RecordFamily>();

export function familyOf(entity: Entity | Def): RecordFamily {
  const def = entity as Def;
  let fam = families.get(def);
  if (!fam) {
    fam = { def, family: def.family, store: recordStore(def), refs: refFields(def), cfField: customField(def), empty: emptyFields(def), named: NAMED_TARGETS.has(def.type) };
    families.set(def, fam);
  }
  return fam;
}

/**
 * The store of an entity type's records with its upkeep side (the stream worker keeps search
 * entries through it); undefined for a type that is not a record family. Reads of another
 * type's records by id need no definition: `recordReads(type)` of the store.
 */
export const storeOfType = (type: string): (RecordStore & RecordUpkeep) | undefined => {
  const def = entityByType(type);
  return def && { ...familyOf(def).store, ...recordUpkeep(def as Def) };
};

/** The API view: every field, computed names current (meta overrides), hidden deleted custom fields. */
export function toApi(fam: RecordFamily, item: Record<string, unknown>, meta?: AccountMeta): Record<string, unknown> {
  const out = currentView(fam.def, item, meta);
  if (fam.cfField) out[fam.cfField] = visibleCustomFields(item[fam.cfField], meta);
  return out;
}

export const notFoundOf = (fam: RecordFamily) => notFound(fam.family, fam.def.label);

/** The definition's cross-field rules on the record as it would be written. */
export function checkRules(fam: RecordFamily, next: Record<string, unknown>, sent: string[]): void {
  const violations = fam.def.rules?.(next, sent) ?? [];
  if (violations.length) {
    const first = violations[0]!;
    throw new ApiError(`${fam.family}.${first.code}`, first.message, violations.map((x) => ({ path: x.path, message: x.message })));
  }
}

/** A lost optimistic-locking race beyond every retry is a conflict, never an internal error. */
export async function writing<T>(fam: RecordFamily, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof WriteConflict) throw new ApiError(`${fam.family}.conflict`, `the ${fam.def.label} is being changed by other requests; retry`, undefined, { cause: error });
    throw error;
  }
}
