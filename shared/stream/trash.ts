/**
 * The stream worker's side of the trash (contract §15):
 *
 * - `undoCascades`: a restored record's insert re-links the records its deletion's cascade
 *   unlinked, where the field is still the value the cascade wrote (its cascade records,
 *   shared/db/trash.ts), then removes those records. Idempotent: a replay finds the link in place
 *   or the cascade record gone.
 * - `repointMerge`: a merge item's insert (and each of its updates) moves one bounded chunk of the
 *   secondary's links to the primary, then records how far it got in the merge item; that update
 *   is the stream record of the next chunk. A crash anywhere replays the last unhandled record,
 *   which continues from the recorded position (re-pointing a record twice changes nothing).
 */
import type { RecordChange } from '../db/changes.js';
import { repointInboundEmailContact } from '../db/inbound-emails.js';
import { getRecord, type StoredRecord } from '../db/items.js';
import { clearOverride } from '../db/meta.js';
import { type EntityType, indexName, keys, RESTORED_ATTR } from '../db/table.js';
import { advanceMerge, deleteCascadeRecords, getMerge, partitionEntriesAfter, readCascadeRecords } from '../db/trash.js';
import { updateRecord } from '../db/writes.js';
import { modelOf, NAMED_TARGETS } from '../domain/entity-service.js';
import { entityByType, type EntityDefinition, refFields } from '../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../schemas/events.js';
import { inParallel, type Reference, referencesTo } from './references.js';

/** Records re-pointed per stream record of a merge (one chunk). */
export const MERGE_CHUNK = 250;
/** Writes in flight at once inside a chunk. */
const PARALLEL = 16;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export async function undoCascades(change: RecordChange): Promise<void> {
  const def = entityByType(change.type) as EntityDefinition | undefined;
  if (!def?.trash || !change.new) return;
  const dver = Number(change.new[RESTORED_ATTR]);
  const restored = await getRecord(change.type, change.accountId, change.id);
  if (!restored || Number(restored[RESTORED_ATTR]) !== dver) return; // deleted again meanwhile: its own deletion decides
  for (;;) {
    const records = await readCascadeRecords(change.accountId, change.type, change.id, 100);
    if (records.length === 0) return;
    await inParallel(records, PARALLEL, async (r) => {
      if (Number(r.dver) !== dver) return; // an older deletion's record
      const entity = entityByType(r.type) as EntityDefinition | undefined;
      const ref = entity && refFields(entity).find((f) => f.field === r.field);
      if (!entity || !ref) return;
      await updateRecord(modelOf(entity), {
        accountId: change.accountId,
        id: r.id,
        actor: SYSTEM_ACTOR,
        compute: (current) => {
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

/** The partitions a merge re-points, in order: every reference to the type, then (contacts) inbound emails' matches. */
type Step = { kind: 'ref'; reference: Reference } | { kind: 'inbound' };
const stepsOf = (type: EntityType): Step[] => [
  ...referencesTo(type).map((reference) => ({ kind: 'ref' as const, reference })),
  ...(type === 'contact' ? [{ kind: 'inbound' as const }] : []),
];

async function repointRecord(reference: Reference, accountId: string, id: string, from: string, primary: StoredRecord | undefined): Promise<void> {
  const { entity, ref } = reference;
  await updateRecord(modelOf(entity), {
    accountId,
    id,
    actor: SYSTEM_ACTOR,
    compute: (current) => {
      const value = current[ref.field];
      if (ref.many) {
        const ids = Array.isArray(value) ? (value as string[]) : [];
        if (!ids.includes(from)) return undefined;
        return { set: { [ref.field]: [...new Set(ids.flatMap((x) => (x === from ? (primary ? [primary.id] : []) : [x])))] } };
      }
      if (value !== from) return undefined;
      if (!primary) return { set: { [ref.field]: null, ...(ref.nameField ? { [ref.nameField]: '' } : {}) } };
      return { set: { [ref.field]: primary.id, ...(ref.nameField ? { [ref.nameField]: String(primary.name ?? '') } : {}) } };
    },
  });
}

export async function repointMerge(change: RecordChange): Promise<void> {
  const secondaryId = change.mergedId;
  if (!secondaryId) return;
  const merge = await getMerge(change.accountId, change.type, secondaryId);
  if (!merge || merge.done) return;
  // The primary as it is now (a primary deleted since: the links are dropped, as its deletion would).
  const primary = await getRecord(change.type, change.accountId, merge.primary_id);
  const steps = stepsOf(change.type);
  let { step, after } = merge;
  let budget = MERGE_CHUNK;
  while (step < steps.length && budget > 0) {
    const s = steps[step]!;
    const pk =
      s.kind === 'ref'
        ? keys.indexPartition(change.accountId, s.reference.entity.type as EntityType, indexName.ref(change.type, secondaryId))
        : keys.inboundEmailByContactPartition(change.accountId, secondaryId);
    const entries = await partitionEntriesAfter(pk, after, budget);
    await inParallel(entries, PARALLEL, (e) =>
      s.kind === 'ref' ? repointRecord(s.reference, change.accountId, e.id, secondaryId, primary) : primary ? repointInboundEmailContact(change.accountId, e, secondaryId, primary.id) : Promise.resolve(),
    );
    budget -= entries.length;
    if (budget > 0) {
      step++;
      after = '';
    } else {
      after = entries[entries.length - 1]!.sk;
    }
  }
  if (step >= steps.length) {
    await advanceMerge(change.accountId, change.type, secondaryId, merge.round, 'done');
    // The secondary's deletion kept reads from showing its name (META override); every link has moved now.
    if (NAMED_TARGETS.has(change.type)) await clearOverride(change.accountId, change.type, secondaryId, Number(merge.ov));
  } else {
    await advanceMerge(change.accountId, change.type, secondaryId, merge.round, { step, after });
  }
}
