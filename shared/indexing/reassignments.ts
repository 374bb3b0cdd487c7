/**
 * A reassignment (contract §20): the job of reassignments-create (and of members-deactivate with
 * `reassign_to`) that hands every record of one member on to another, or leaves it unowned. It
 * runs on the index-build queue (a job that rewrites an account's existing records: the same
 * lease, places and fairness as the index builds and stage moves, ./worker.ts).
 *
 * Each family of the job's `types` is walked through its referencing partition of the member
 * (the reference index entries of its owner field, `owner_id` or `assignee_id`: target type
 * `member`), a bounded page at a time, in sort-key order. Each record of a page is written through
 * the normal write path (`applyUpdate`, as `<family>-update`: its `*.updated` event, actor
 * `{ type: 'reassignment', id }`), conditionally on the owner as read: the optimistic write
 * decides on the record as each attempt read it, and writes only while its owner is still
 * `from_owner_id`, so a record a user changed meanwhile is kept. After each page the walk's place
 * (`type_index`, `after`: the page's last sort key) and the counts are saved through the lease.
 *
 * Resumable: a worker that dies is taken over once its lease runs out, and walks again after the
 * last saved page. A record of the lost page that was moved is no longer in the partition; one
 * that was not is read again by the conditional write, so no record is written twice.
 */
import { clearActiveIndexBuild, getReassignmentItem, type IndexBuildItem, type IndexBuildStatus, leaseIndexBuild, type Reassignment } from '../db/index-builds.js';
import type { JobLease } from '../db/job-lease.js';
import type { OperationContext } from '../domain/context.js';
import { familyOf, type RecordFamily } from '../domain/records/family.js';
import { inParallel, referencesTo } from '../domain/records/referencing.js';
import { applyUpdate } from '../domain/records/update.js';
import { ApiError } from '../errors.js';
import type { Actor } from '../schemas/events.js';
import type { ReassignmentType } from '../schemas/reassignments.js';

/** Referencing entries read per page (the page's end and counts are saved) and records written at once. */
const PAGE_SIZE = 100;
const PARALLEL = 16;
/** The reference target type of owners. */
const MEMBER = 'member';

export interface ReassignmentDeps {
  pageSize?: number;
  leaseMs?: number;
  /** Called with a page's record ids before they are written (tests change a record there). */
  beforeWrites?: (ids: readonly string[], job: Reassignment) => void | Promise<void>;
  /** Called after each saved page (tests stop a job there to resume it). */
  afterPage?: (job: Reassignment) => void | Promise<void>;
}

export type ReassignmentOutcome = 'completed' | 'gone';

/** The write found the record's owner no longer the one the job hands on: nothing written. */
class NotOwned extends Error {}

/** The family of `type` and its owner field (none when the family has no reference to members). */
function ownerFieldOf(type: ReassignmentType): { fam: RecordFamily; field: string } | undefined {
  const found = referencesTo(MEMBER).find((r) => r.entity.family === type && !r.ref.many);
  return found && { fam: familyOf(found.entity), field: found.ref.field };
}

/** Gives record `id` the owner `to` if its `field` is still `from` as read; whether it changed. */
async function reassignOne(ctx: OperationContext, fam: RecordFamily, field: string, id: string, from: string, to: string | null): Promise<boolean> {
  try {
    const out = await applyUpdate(fam, ctx, { id, fields: { [field]: to } }, undefined, {
      load: async () => undefined,
      // Decided on the record as read by each attempt of the optimistic write (its version is the write's condition).
      items: (current) => {
        if (current[field] !== from) throw new NotOwned();
        return [];
      },
    });
    return out.changed;
  } catch (error) {
    if (error instanceof NotOwned) return false;
    // Deleted meanwhile, or the new owner was deactivated since the job started: the record keeps its owner.
    if (error instanceof ApiError && (error.code === `${fam.family}.not_found` || error.code === `${fam.family}.invalid_${field}`)) return false;
    throw error;
  }
}

/** Walks the job's families from its saved place; each page written, then its place and counts saved through the lease. */
async function walk(job: Reassignment, lease: JobLease<IndexBuildItem, IndexBuildStatus>, deps: ReassignmentDeps): Promise<ReassignmentOutcome | undefined> {
  const actor: Actor = { type: 'reassignment', id: job.id };
  const ctx: OperationContext = { accountId: job.account_id, userId: 'system', operation: 'reassignments-create', headers: {}, actor };
  const pageSize = deps.pageSize ?? PAGE_SIZE;
  for (;;) {
    const current = lease.job as Reassignment;
    const type = current.types[current.type_index];
    if (type === undefined) return undefined;
    const owner = ownerFieldOf(type);
    const entries = owner ? await owner.fam.store.referencingAfter(job.account_id, MEMBER, job.from_owner_id, current.after ?? '', pageSize) : [];
    const ids = [...new Set(entries.map((e) => e.id))];
    await deps.beforeWrites?.(ids, current);
    let changed = 0;
    if (owner) {
      await inParallel(ids, PARALLEL, async (id) => {
        if (await reassignOne(ctx, owner.fam, owner.field, id, job.from_owner_id, job.to_owner_id)) changed++;
      });
    }
    // A short page ends the family: the next page starts the next family from its start.
    const last = entries.length === pageSize ? entries[entries.length - 1] : undefined;
    const place: Partial<Reassignment> = last ? { after: last.sk } : { type_index: current.type_index + 1, after: '' };
    const saved = await lease.save({ ...place, position: current.position + 1 }, { position: current.position }, { processed: ids.length, changed });
    if (!saved) return (await lease.lost()) === 'completed' ? 'completed' : 'gone';
    await deps.afterPage?.(saved as Reassignment);
  }
}

/** The lease of a job whose worker died: taken over after it. */
const REASSIGNMENT_LEASE_MS = 60_000;

/** Runs (or resumes) the reassignment `id` of the account; its outcome. */
export async function runReassignment(job: Reassignment, deps: ReassignmentDeps = {}): Promise<ReassignmentOutcome> {
  const lease = await leaseIndexBuild(job, { running: 'processing', from: 'queued', leaseMs: deps.leaseMs ?? REASSIGNMENT_LEASE_MS });
  if (!lease) {
    // Ended (or gone) before or while this worker tried to take it.
    await clearActiveIndexBuild(job.account_id, job.id);
    const now = await getReassignmentItem(job.account_id, job.id);
    return now?.status === 'completed' ? 'completed' : 'gone';
  }
  const ended = await walk(job, lease, deps);
  if (ended) return ended;
  await lease.end({ status: 'completed', completed_at: new Date().toISOString() });
  await clearActiveIndexBuild(job.account_id, job.id);
  return 'completed';
}
