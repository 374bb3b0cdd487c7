/**
 * The index-build worker (contract §17): applies a change of a custom field's `indexed` to the
 * account's existing records (and runs the stage moves of pipelines-update, ./stage-moves.ts, and
 * the reassignments of §20, ./reassignments.ts), page by page, through the record store (shared/db/record-store.ts:
 * `buildSortedPage`, entries written and checked against the records; `removeSortedPage`,
 * entries deleted). Each page's end is
 * saved through the job store's lease (a conditional update of position and lease:
 * shared/db/jobs.ts), so a worker that dies resumes after its last saved page once the lease runs
 * out (or at once, at local mode's start). When done, the definition's `index_status` becomes `ready`; a build that
 * a later change of the same field superseded stops.
 */
import { finishDefinitionIndex, getDefinitionItem } from '../db/custom-fields.js';
import { clearActiveIndexBuild, getIndexBuild, type IndexBuildItem, leaseIndexBuild } from '../db/index-builds.js';
import { buildSortedPage, removeSortedPage } from '../db/record-store.js';
import type { EntityType } from '../db/table.js';
import { entityByType } from '../schemas/entities/index.js';
import { type ReassignmentDeps, runReassignment } from './reassignments.js';
import { runStageMove } from './stage-moves.js';
import { type IndexBuildMessage, indexBuildQueueFairness } from './storage.js';

/** How long a worker holds a build between two saved pages. */
export const INDEX_BUILD_LEASE_MS = 60_000;
/** One of an account's builds runs at once (the queue runs 2 locally and deployed: functions/topology.ts; shared/http/job-handler.ts). */
export const indexBuildFairness = indexBuildQueueFairness('indexBuilds', 1);
/** Records (or entries) a page handles. */
const PAGE_SIZE = 500;

export interface IndexBuildWorkerDeps {
  leaseMs?: number;
  pageSize?: number;
  /** Called after each saved page (tests stop a build there to resume it). */
  afterPage?: (job: IndexBuildItem) => void | Promise<void>;
  /** The same for reassignments (./reassignments.ts). */
  reassignment?: ReassignmentDeps;
}

export type IndexBuildOutcome = 'completed' | 'superseded' | 'gone';

export async function runIndexBuild(message: IndexBuildMessage, deps: IndexBuildWorkerDeps = {}): Promise<IndexBuildOutcome> {
  const { account_id: accountId, build_id: id } = message;
  const job = await getIndexBuild(accountId, id);
  if (job?.action === 'reassign') return runReassignment(job, { leaseMs: deps.leaseMs, pageSize: deps.pageSize, ...deps.reassignment });
  const lease = job && (await leaseIndexBuild(job, { running: 'processing', leaseMs: deps.leaseMs ?? INDEX_BUILD_LEASE_MS }));
  if (!lease) {
    // Ended (or gone) before or while this worker tried to take it.
    await clearActiveIndexBuild(accountId, id);
    const now = job?.status === 'processing' ? await getIndexBuild(accountId, id) : job;
    return (now?.status as IndexBuildOutcome | undefined) ?? 'gone';
  }
  if (job.action === 'move') {
    const outcome = await runStageMove(job, lease, deps);
    await clearActiveIndexBuild(accountId, id);
    return outcome;
  }
  const entity = entityByType(job.entity_type);
  if (!entity) throw new Error(`index build ${id}: unknown entity type ${job.entity_type}`);
  const type = entity.type as EntityType;
  const pageSize = deps.pageSize ?? PAGE_SIZE;
  for (;;) {
    // A later change of the field (or, for a build, its deletion) supersedes this one.
    const def = await getDefinitionItem(accountId, job.field_id);
    if (def ? def.index_build !== id : job.action === 'build') {
      await lease.end({ status: 'superseded' });
      await clearActiveIndexBuild(accountId, id);
      return 'superseded';
    }
    const current = lease.job;
    const page = job.action === 'build' ? await buildSortedPage(type, accountId, job.field_id, job.field_type, current.after, pageSize) : await removeSortedPage(type, accountId, job.field_id, pageSize);
    const finished = job.action === 'build' ? page.after === undefined : page.done === 0;
    const saved = await lease.save({ position: current.position + 1, done: current.done + page.done, ...(job.action === 'build' && page.after ? { after: page.after } : {}) }, { position: current.position });
    if (!saved) return ((await lease.lost()) as IndexBuildOutcome | undefined) ?? 'gone';
    await deps.afterPage?.(saved);
    if (finished) break;
  }
  await finishDefinitionIndex(accountId, job.field_id, id);
  await lease.end({ status: 'completed', completed_at: new Date().toISOString() });
  await clearActiveIndexBuild(accountId, id);
  return 'completed';
}
