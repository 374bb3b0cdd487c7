/**
 * Merges (contract §15). `merge` folds a duplicate (`secondary`) into `primary` and trashes the
 * secondary with a merge item; `repointMerge` (run by the stream worker on the merge item's
 * insert and each of its updates) moves one bounded chunk of the secondary's links to the
 * primary, then records how far it got in the merge item; that update is the stream record of
 * the next chunk. A crash anywhere replays the last unhandled record, which continues from the
 * recorded position (re-pointing a record twice changes nothing).
 */
import type { RecordChange } from '../../db/changes.js';
import { repointInboundEmailContact } from '../../db/inbound-emails.js';
import type { StoredRecord } from '../../db/items.js';
import { clearOverride, readMeta, setOverrideItem } from '../../db/meta.js';
import { recordStore } from '../../db/record-store.js';
import { type EntityType, keys } from '../../db/table.js';
import { advanceMerge, getMerge, mergePut, partitionEntriesAfter, recordExistsCheck, trashPut } from '../../db/trash.js';
import { ApiError } from '../../errors.js';
import { settable, tagsField } from '../../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../../schemas/events.js';
import { actorOf, type OperationContext } from '../context.js';
import { trashOrDelete } from './delete.js';
import { NAMED_TARGETS, notFoundOf, type RecordFamily, storeOfType, toApi } from './family.js';
import { inParallel, type Reference, referencesTo } from './referencing.js';
import { applyUpdate } from './update.js';

/** Records re-pointed per stream record of a merge (one chunk). */
export const MERGE_CHUNK = 250;
/** Writes in flight at once inside a chunk. */
const PARALLEL = 16;

const isEmpty = (x: unknown) => x === null || x === undefined || x === '' || (Array.isArray(x) && x.length === 0) || (typeof x === 'object' && !Array.isArray(x) && Object.keys(x as object).length === 0);

/**
 * What the primary takes from the secondary: its own non-empty fields stay, the secondary's fill
 * the empty ones, tags are the union (primary's first), custom fields merge by key (primary wins).
 */
function takenFrom(fam: RecordFamily, primary: Record<string, unknown>, secondary: Record<string, unknown>): Record<string, unknown> {
  const tags = tagsField(fam.def);
  const sent: Record<string, unknown> = {};
  for (const field of settable(fam.def, 'update')) {
    if (field === tags) {
      const union = [...new Set([...((primary[field] as string[]) ?? []), ...((secondary[field] as string[]) ?? [])])].slice(0, 50);
      if (union.length !== (primary[field] as string[]).length) sent[field] = union;
    } else if (field === fam.cfField) {
      const mine = (primary[field] ?? {}) as Record<string, unknown>;
      const theirs = Object.fromEntries(Object.entries((secondary[field] ?? {}) as Record<string, unknown>).filter(([k]) => !(k in mine)));
      if (Object.keys(theirs).length) sent[field] = theirs;
    } else if (isEmpty(primary[field]) && !isEmpty(secondary[field])) {
      sent[field] = secondary[field];
    }
  }
  return sent;
}

/**
 * Merges a duplicate (`secondary`) into `primary` (`takenFrom`); then the secondary goes to the
 * trash with a merge item, whose stream records re-point the secondary's links in bounded chunks
 * (`repointMerge`). Answers the primary.
 */
export async function merge(fam: RecordFamily, ctx: OperationContext, primaryId: string, secondaryId: string): Promise<Record<string, unknown>> {
  const { def, family, store } = fam;
  if (!def.merge) throw notFoundOf(fam);
  if (primaryId === secondaryId) throw new ApiError(`${family}.invalid_request`, 'primary_id and secondary_id must be different records', [{ path: 'secondary_id', message: 'is the same as primary_id' }]);
  const [p, s] = await Promise.all([store.getWithMeta(ctx.accountId, primaryId), store.getWithMeta(ctx.accountId, secondaryId)]);
  if (!p.record || !s.record) throw new ApiError(`${family}.not_found`, `${def.label} not found: ${!p.record ? 'primary_id' : 'secondary_id'}`);
  const sent = takenFrom(fam, toApi(fam, p.record, p.meta), toApi(fam, s.record, s.meta));
  // One transaction when the primary changes: its update, the secondary's deletion with its
  // trash item, and the merge item (re-read on every attempt of the optimistic write).
  const type = def.type as EntityType;
  const missing = () => new ApiError(`${family}.not_found`, `${def.label} not found: secondary_id`);
  let second: StoredRecord | undefined;
  const secondaryItems = (sec: StoredRecord, primaryNext: StoredRecord) => [
    ...(fam.named ? [setOverrideItem(ctx.accountId, type, secondaryId, String(primaryNext.name ?? ''), sec.ver + 1, primaryId)] : []),
    trashPut(ctx.accountId, type, sec, new Date().toISOString(), primaryId),
    mergePut(ctx.accountId, type, sec, primaryNext, actorOf(ctx)),
  ];
  const { stored, changed } = await applyUpdate(fam, ctx, { id: primaryId, fields: sent }, undefined, {
    load: async () => {
      second = await store.get(ctx.accountId, secondaryId);
      if (!second) throw missing();
    },
    items: (_current, next) => store.deletionItems(ctx.accountId, second!, secondaryItems(second!, next), actorOf(ctx)),
  });
  if (!changed) {
    // Nothing to take from the secondary: its deletion alone, guarded by the primary's existence.
    const old = await trashOrDelete(fam, ctx, secondaryId, (current) => [mergePut(ctx.accountId, type, current, stored, actorOf(ctx)), recordExistsCheck(ctx.accountId, type, primaryId)], { id: primaryId, name: String(stored.name ?? '') });
    if (!old) throw missing();
  }
  return toApi(fam, stored, await readMeta(ctx.accountId));
}

// --- the stream worker's side: re-pointing the secondary's links ---

/** The partitions a merge re-points, in order: every reference to the type, then (contacts) inbound emails' matches. */
type Step = { kind: 'ref'; reference: Reference } | { kind: 'inbound' };
const stepsOf = (type: EntityType): Step[] => [
  ...referencesTo(type).map((reference) => ({ kind: 'ref' as const, reference })),
  ...(type === 'contact' ? [{ kind: 'inbound' as const }] : []),
];

async function repointRecord(reference: Reference, accountId: string, id: string, from: string, primary: StoredRecord | undefined): Promise<void> {
  const { entity, ref } = reference;
  await recordStore(entity).update({
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

/** One bounded chunk of a step's links, re-pointed to the primary. */
async function repointChunk(s: Step, accountId: string, type: EntityType, secondaryId: string, primary: StoredRecord | undefined, after: string, budget: number) {
  const entries =
    s.kind === 'ref'
      ? await recordStore(s.reference.entity).referencingAfter(accountId, type, secondaryId, after, budget)
      : await partitionEntriesAfter(keys.inboundEmailByContactPartition(accountId, secondaryId), after, budget);
  await inParallel(entries, PARALLEL, (e) =>
    s.kind === 'ref' ? repointRecord(s.reference, accountId, e.id, secondaryId, primary) : primary ? repointInboundEmailContact(accountId, e, secondaryId, primary.id) : Promise.resolve(),
  );
  return entries;
}

export async function repointMerge(change: RecordChange): Promise<void> {
  const secondaryId = change.mergedId;
  if (!secondaryId) return;
  const merge = await getMerge(change.accountId, change.type, secondaryId);
  if (!merge || merge.done) return;
  // The primary as it is now (a primary deleted since: the links are dropped, as its deletion would).
  const primary = await storeOfType(change.type)!.get(change.accountId, merge.primary_id);
  const steps = stepsOf(change.type);
  let { step, after } = merge;
  let budget = MERGE_CHUNK;
  while (step < steps.length && budget > 0) {
    const entries = await repointChunk(steps[step]!, change.accountId, change.type, secondaryId, primary, after, budget);
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
