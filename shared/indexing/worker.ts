/**
 * The index-build worker (contract §17): applies a change of a custom field's `indexed` to the
 * account's existing records, page by page, through the record store (`buildSorted`: entries
 * written and checked against the records; `removeSorted`: entries deleted). Each page's end is
 * saved with the job store's conditional update (position, lease: shared/db/jobs.ts), so a
 * worker that dies resumes after its last saved page once the lease runs out (or at once, at
 * local mode's start). When done, the definition's `index_status` becomes `ready`; a build that
 * a later change of the same field superseded stops.
 */
import { randomUUID } from 'node:crypto';
import { finishDefinitionIndex, getDefinitionItem } from '../db/custom-fields.js';
import { clearActiveIndexBuild, getIndexBuild, type IndexBuildItem, updateIndexBuild } from '../db/index-builds.js';
import { familyOf } from '../domain/records/family.js';
import { entityByType } from '../schemas/entities/index.js';
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
}

/** Another worker holds the build's lease: the message must come back later. */
export class IndexBuildLeaseHeld extends Error {}

export type IndexBuildOutcome = 'completed' | 'superseded' | 'gone';

export async function runIndexBuild(message: IndexBuildMessage, deps: IndexBuildWorkerDeps = {}): Promise<IndexBuildOutcome> {
  const { account_id: accountId, build_id: id } = message;
  const job = await getIndexBuild(accountId, id);
  if (!job || job.status !== 'processing') {
    await clearActiveIndexBuild(accountId, id);
    return job ? (job.status as IndexBuildOutcome) : 'gone';
  }
  const entity = entityByType(job.entity_type);
  if (!entity) throw new Error(`index build ${id}: unknown entity type ${job.entity_type}`);
  const store = familyOf(entity).store;
  const owner = randomUUID();
  const leaseMs = deps.leaseMs ?? INDEX_BUILD_LEASE_MS;
  const pageSize = deps.pageSize ?? PAGE_SIZE;
  let current = await updateIndexBuild(accountId, id, { lease_owner: owner, lease_until: Date.now() + leaseMs }, { statusIn: ['processing'], lease: { owner, mode: 'take', now: Date.now() } });
  if (!current) throw new IndexBuildLeaseHeld();
  for (;;) {
    // A later change of the field (or, for a build, its deletion) supersedes this one.
    const def = await getDefinitionItem(accountId, job.field_id);
    if (def ? def.index_build !== id : job.action === 'build') {
      await updateIndexBuild(accountId, id, { status: 'superseded', lease_until: 0 }, { statusIn: ['processing'], lease: { owner, mode: 'held', now: Date.now() } });
      await clearActiveIndexBuild(accountId, id);
      return 'superseded';
    }
    const page = job.action === 'build' ? await store.buildSorted(accountId, job.field_id, job.field_type, current.after, pageSize) : await store.removeSorted(accountId, job.field_id, pageSize);
    const finished = job.action === 'build' ? page.after === undefined : page.done === 0;
    const saved = await updateIndexBuild(
      accountId,
      id,
      { position: current.position + 1, done: current.done + page.done, lease_until: Date.now() + leaseMs, ...(job.action === 'build' && page.after ? { after: page.after } : {}) },
      { statusIn: ['processing'], position: current.position, lease: { owner, mode: 'held', now: Date.now() } },
    );
    if (!saved) throw new IndexBuildLeaseHeld();
    current = saved;
    await deps.afterPage?.(current);
    if (finished) break;
  }
  await finishDefinitionIndex(accountId, job.field_id, id);
  await updateIndexBuild(accountId, id, { status: 'completed', completed_at: new Date().toISOString(), lease_until: 0 }, { statusIn: ['processing'], lease: { owner, mode: 'held', now: Date.now() } });
  await clearActiveIndexBuild(accountId, id);
  return 'completed';
}
