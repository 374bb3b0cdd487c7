/**
 * References of a record to records of other families (contract §3): the sent ids are checked
 * against the account (their computed names read), and a write that linked records read at some
 * version is brought up to date when one of them changed meanwhile (`reconcile`).
 */
import type { StoredRecord } from '../../db/items.js';
import { targetReads } from '../../db/record-store.js';
import type { ReferenceTarget } from '../../db/table.js';
import { ApiError } from '../../errors.js';
import type { Actor } from '../../schemas/events.js';
import { isUuid } from '../../schemas/primitives.js';
import type { CustomFieldDefinition } from '../custom-fields.js';
import type { RecordFamily, Ref } from './family.js';
import { updateOptimistic } from './optimistic.js';

/**
 * What a batch (shared/domain/batch.ts) reads once for all its items: the entity type's
 * custom-field definitions and the records its items reference. Absent, each call reads its own.
 */
export interface Preloaded {
  definitions?: readonly CustomFieldDefinition[];
  /** Referenced records by target type, then id: an id missing from a loaded type is not a record of the account. */
  records?: ReadonlyMap<string, ReadonlyMap<string, StoredRecord>>;
  /** A deactivated member is taken as well (a merge takes the secondary's owner as it is: contract §20). */
  deactivatedMembers?: true;
}

export interface Resolved {
  field: string;
  target: string;
  /** Ids linked by this write, with the version and name read. */
  linked: Array<{ id: string; ver: number; name: string }>;
}

/** Reads of a reference's target family (by type: a create does not bundle the target's definition), or of members. */
export const targetStore = (ref: Ref) => targetReads(ref.target as ReferenceTarget);

/** A member referenced by a write must be active (contract §20); a deactivated one stays where it is already. */
const MEMBER = 'member';

const invalidRef = (ref: Ref, detail: string) =>
  new ApiError(ref.code, `${ref.field} does not reference an existing ${ref.target === MEMBER ? 'active member' : ref.target} of this account`, [{ path: ref.field, message: detail }]);

const linkOf = (r: StoredRecord) => ({ id: r.id, ver: r.ver, name: String(r.name ?? '') });

/** An id array: every id a UUID of a record of the account. */
async function resolveMany(ref: Ref, accountId: string, value: unknown, known: ReadonlyMap<string, StoredRecord> | undefined) {
  const ids = (value as string[] | undefined) ?? [];
  const bad = ids.find((id) => !isUuid(id));
  if (bad !== undefined) throw new ApiError(ref.code, `${ref.field} must be an array of UUIDs: ${JSON.stringify(String(bad).slice(0, 64))} is not a UUID`, [{ path: ref.field, message: 'every id must be a UUID' }]);
  const preloaded = known && new Map(ids.flatMap((id) => (known.has(id) ? [[id, known.get(id)!] as const] : [])));
  const found = ids.length ? (preloaded ?? (await targetStore(ref).getMany(accountId, ids))) : new Map<string, StoredRecord>();
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length) throw invalidRef(ref, `no such ${ref.target}: ${missing.join(', ')}`);
  return { ids, resolved: { field: ref.field, target: ref.target, linked: ids.map((id) => linkOf(found.get(id)!)) } };
}

/** A single reference: a UUID of a record of the account, or null. */
async function resolveOne(ref: Ref, accountId: string, value: unknown, known: ReadonlyMap<string, StoredRecord> | undefined, deactivated?: true) {
  const id = String(value).toLowerCase();
  if (!isUuid(id)) throw new ApiError(ref.code, `${ref.field} must be a UUID or null: ${JSON.stringify(String(value).slice(0, 64))} is not a UUID`, [{ path: ref.field, message: 'is not a UUID' }]);
  const record = known ? known.get(id) : await targetStore(ref).get(accountId, id);
  if (!record) throw invalidRef(ref, `no such ${ref.target}`);
  if (ref.target === MEMBER && record.status !== 'active' && !deactivated) throw invalidRef(ref, 'is a deactivated member');
  return record;
}

/** Checks the sent references against the account; returns the stored values and what was linked. */
export async function resolveRefs(fam: RecordFamily, accountId: string, sent: Record<string, unknown>, pre?: Preloaded): Promise<{ set: Record<string, unknown>; resolved: Resolved[] }> {
  const set: Record<string, unknown> = {};
  const resolved: Resolved[] = [];
  await Promise.all(
    fam.refs.map(async (ref) => {
      if (!(ref.field in sent)) return;
      const value = sent[ref.field];
      const known = pre?.records?.get(ref.target);
      if (ref.many) {
        const out = await resolveMany(ref, accountId, value, known);
        set[ref.field] = out.ids;
        resolved.push(out.resolved);
        return;
      }
      if (value === null || value === undefined) {
        set[ref.field] = null;
        if (ref.nameField) set[ref.nameField] = '';
        return;
      }
      const record = await resolveOne(ref, accountId, value, known, pre?.deactivatedMembers);
      set[ref.field] = record.id;
      if (ref.nameField) set[ref.nameField] = String(record.name ?? '');
      resolved.push({ field: ref.field, target: ref.target, linked: [linkOf(record)] });
    }),
  );
  return { set, resolved };
}

/**
 * After a write that linked records read at some version: if one was renamed or deleted
 * meanwhile, its fan-out may have run before this record was visible, so bring the record up
 * to date here. Whichever of the two runs last sees both writes.
 */
export async function reconcile(fam: RecordFamily, accountId: string, record: StoredRecord, resolved: Resolved[], actor: Actor): Promise<StoredRecord> {
  let current = record;
  for (const r of resolved) {
    const ref = fam.refs.find((x) => x.field === r.field)!;
    const now = await targetStore(ref).getMany(accountId, r.linked.map((l) => l.id));
    const stale = r.linked.filter((l) => now.get(l.id)?.ver !== l.ver);
    if (stale.length === 0) continue;
    current =
      (await updateOptimistic(fam.store, {
        accountId,
        id: record.id,
        actor,
        decide: (c) => {
          if (ref.many) {
            const ids = (c[ref.field] as string[]) ?? [];
            const kept = ids.filter((id) => !stale.some((s) => s.id === id) || now.has(id));
            return kept.length === ids.length ? undefined : { set: { [ref.field]: kept } };
          }
          const target = now.get(r.linked[0]!.id);
          if (c[ref.field] !== r.linked[0]!.id) return undefined;
          if (!target) return { set: { [ref.field]: null, ...(ref.nameField ? { [ref.nameField]: '' } : {}) } };
          return ref.nameField ? { set: { [ref.nameField]: target.name } } : undefined;
        },
      }))?.record ?? current;
  }
  return current;
}
