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
import { clearOverride, setOverrideItem } from '../../db/meta.js';
import { recordReads, recordStore, recordUpkeep } from '../../db/record-store.js';
import { type EntityType, keys } from '../../db/table.js';
import { advanceMerge, getMerge, mergePut, partitionEntriesAfter, recordVersionCheck, trashPut } from '../../db/trash.js';
import { ApiError } from '../../errors.js';
import { settable, tagsField } from '../../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../../schemas/events.js';
import { actorOf, type OperationContext } from '../context.js';
import { trashOrDelete } from './delete.js';
import { NAMED_TARGETS, notFoundOf, type RecordFamily, toApi } from './family.js';
import { inParallel, type Reference, referencesTo, relink } from './referencing.js';
import { applyUpdate } from './update.js';
import { updateOptimistic } from './optimistic.js';
import { backoff } from '../../backoff.js';
import { positiveIntEnv } from '../../config/env.js';

/** Records re-pointed per stream record of a merge (one chunk). */
export const MERGE_CHUNK = 250;
/** The chunk in use: `CRM_MERGE_CHUNK` (tests move several chunks of fewer links), else MERGE_CHUNK. Read on every use. */
export const mergeChunk = (): number => positiveIntEnv('CRM_MERGE_CHUNK', MERGE_CHUNK);
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

/** Attempts of a merge that lost a race to a write of either record (each attempt reads both again). */
export const MERGE_ATTEMPTS = 12;

/** One attempt of a merge lost a race: the primary or the secondary changed after it was read. */
class StaleMerge extends Error {}

/**
 * Merges a duplicate (`secondary`) into `primary` (`takenFrom`); then the secondary goes to the
 * trash with a merge item, whose stream records re-point the secondary's links in bounded chunks
 * (`repointMerge`). Answers the primary.
 *
 * Contract §15: the merge reads both records as of its own commit. Each attempt reads both,
 * works out what the primary takes, and writes one transaction conditioned on both versions it
 * read (the primary's update or version check, the secondary's deletion); a write of either in
 * between fails that transaction and the merge starts again from fresh reads, at most
 * MERGE_ATTEMPTS times, then answers `<family>.conflict` having changed nothing.
 */
export async function merge(fam: RecordFamily, ctx: OperationContext, primaryId: string, secondaryId: string): Promise<Record<string, unknown>> {
  const { def, family } = fam;
  if (!def.merge) throw notFoundOf(fam);
  if (primaryId === secondaryId) throw new ApiError(`${family}.invalid_request`, 'primary_id and secondary_id must be different records', [{ path: 'secondary_id', message: 'is the same as primary_id' }]);
  for (let attempt = 1; ; attempt++) {
    try {
      return await mergeOnce(fam, ctx, primaryId, secondaryId);
    } catch (error) {
      if (!(error instanceof StaleMerge)) throw error;
      if (attempt >= MERGE_ATTEMPTS) throw new ApiError(`${family}.conflict`, `the ${def.label}s are being changed by other requests; retry the merge`, undefined, { cause: error });
      await backoff(attempt, 5, 200);
    }
  }
}

async function mergeOnce(fam: RecordFamily, ctx: OperationContext, primaryId: string, secondaryId: string): Promise<Record<string, unknown>> {
  const { def, family, store } = fam;
  const type = def.type as EntityType;
  const [p, s] = await Promise.all([store.getWithMeta(ctx.accountId, primaryId), store.getWithMeta(ctx.accountId, secondaryId)]);
  if (!p.record || !s.record) throw new ApiError(`${family}.not_found`, `${def.label} not found: ${!p.record ? 'primary_id' : 'secondary_id'}`);
  const primary = p.record;
  const secondary = s.record;
  const sent = takenFrom(fam, toApi(fam, primary, p.meta), toApi(fam, secondary, s.meta));
  // The store retries a write whose transaction failed; here a second try means that one of the
  // records changed since it was read: the attempt is stale (its `sent` may be), start again.
  let tries = 0;
  const firstTry = () => {
    if (tries++ > 0) throw new StaleMerge();
  };
  const secondaryItems = (primaryNext: StoredRecord) => [
    ...(fam.named ? [setOverrideItem(ctx.accountId, type, secondaryId, String(primaryNext.name ?? ''), secondary.ver + 1, primaryId)] : []),
    trashPut(ctx.accountId, type, secondary, new Date().toISOString(), primaryId),
    mergePut(ctx.accountId, type, secondary, primaryNext, actorOf(ctx)),
  ];
  if (Object.keys(sent).length > 0) {
    const upkeep = recordUpkeep(def);
    let deletion: ReturnType<typeof upkeep.deletion> | undefined;
    // One transaction: the primary's update (guarded by the version read here), the secondary's
    // deletion at the version read here with its trash item, and the merge item.
    const { stored, changed, meta } = await applyUpdate(fam, ctx, { id: primaryId, fields: sent }, { deactivatedMembers: true }, {
      load: async () => undefined,
      items: (current, next, custom) => {
        firstTry();
        if (current.ver !== primary.ver) throw new StaleMerge();
        deletion = upkeep.deletion(ctx.accountId, secondary, secondaryItems(next), custom, actorOf(ctx));
        return deletion.items;
      },
    });
    // Nothing was written: the primary changed since it was read and holds these values already.
    if (!changed) throw new StaleMerge();
    await deletion?.settle();
    return toApi(fam, stored, meta);
  }
  // Nothing to take from the secondary: its deletion alone, guarded by the primary's version.
  const old = await trashOrDelete(
    fam,
    ctx,
    secondaryId,
    (current) => {
      firstTry();
      if (current.ver !== secondary.ver) throw new StaleMerge();
      return [mergePut(ctx.accountId, type, current, primary, actorOf(ctx)), recordVersionCheck(ctx.accountId, type, primaryId, primary.ver)];
    },
    { id: primaryId, name: String(primary.name ?? '') },
  );
  if (!old) throw new StaleMerge(); // deleted meanwhile: the next attempt answers not_found
  return toApi(fam, primary, p.meta);
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
  await updateOptimistic(recordStore(entity), {
    accountId,
    id,
    actor: SYSTEM_ACTOR,
    decide: (current) => relink(ref, current, from, primary ? { id: primary.id, name: String(primary.name ?? '') } : null),
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
  const primary = await recordReads(change.type).get(change.accountId, merge.primary_id);
  const steps = stepsOf(change.type);
  let { step, after } = merge;
  let budget = mergeChunk();
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
