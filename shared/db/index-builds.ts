/**
 * Index builds (contract §17): applying a change of a custom field's `indexed` to the account's
 * existing records; stage moves (§19), the projects of a pipeline's removed stages moved; and
 * reassignments (§20), one member's records handed on to another. One item per build, moved by the job store's conditional updates (status,
 * saved position, the worker's lease: shared/db/jobs.ts), and a marker while it runs.
 */
import { positionOf, queryNewestFirst } from './items.js';
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { jobStore } from './jobs.js';
import { keys } from './table.js';
import type { FieldType } from '../schemas/filter.js';
import type { ReassignmentType } from '../schemas/reassignments.js';

/** `queued`: a reassignment no worker has started yet (builds and moves start `processing`). */
export type IndexBuildStatus = 'queued' | 'processing' | 'completed' | 'superseded';

interface JobFields {
  id: string;
  account_id: string;
  created_at: string;
  status: IndexBuildStatus;
  /** Pages done (the job store's saved position) and the last record position or entry key done. */
  position: number;
  after?: string;
  /** Records (build) or entries (remove) done; projects moved (move). */
  done: number;
  completed_at?: string;
  lease_owner?: string;
  lease_until?: number;
}

/** A build of a custom field's entries. */
export interface FieldBuild extends JobFields {
  /** The custom-field definition and its entity type. */
  field_id: string;
  entity_type: string;
  /** Its §17 type (how its values sort). */
  field_type: FieldType;
  /** `build`: write the entries of every record; `remove`: delete them all. */
  action: 'build' | 'remove';
}

/**
 * A move of the projects of a pipeline's stages (contract §19 `move_to`): the same queue, lease and
 * places as the builds (a job that rewrites an account's existing records). `moves`: from stage id
 * to stage id, as the pipelines-update that queued it asked.
 */
export interface StageMove extends JobFields {
  action: 'move';
  pipeline_id: string;
  moves: Record<string, string>;
  /** Stages that stay but were renamed or given a new probability or rot_days: their projects' derived fields are written again. */
  refresh?: string[];
}

/**
 * A reassignment (contract §20): every record of the `types` families owned by `from_owner_id`
 * given `to_owner_id` (shared/indexing/reassignments.ts). The same queue, lease and places; its
 * place in the walk is `type_index` (in `types`) and `after` (the last referencing entry done).
 */
export interface Reassignment extends JobFields {
  action: 'reassign';
  created_by: string;
  from_owner_id: string;
  to_owner_id: string | null;
  types: ReassignmentType[];
  type_index: number;
  /** Records looked at, and changed. */
  processed: number;
  changed: number;
}

/** A job of the index-build queue. */
export type IndexBuildItem = FieldBuild | StageMove | Reassignment;

const store = jobStore<IndexBuildItem, 'build_id'>({
  job: keys.indexBuildJob,
  gsi: keys.indexBuildGsi,
  listPartition: keys.indexBuildListPartition,
  active: keys.activeIndexBuild,
  activePartition: keys.activeIndexBuildsPartition,
  activeIdAttr: 'build_id',
});

export const insertIndexBuild = async (item: IndexBuildItem) => {
  await store.insert(item);
  await store.markActive(item.account_id, item.id);
};
export const getIndexBuild = store.get;

/** The account's reassignment `id` (undefined: none, or another kind of job). */
export async function getReassignmentItem(accountId: string, id: string): Promise<Reassignment | undefined> {
  const job = await store.get(accountId, id);
  return job?.action === 'reassign' ? job : undefined;
}

/** Jobs read per query while looking for reassignments among the account's jobs (index builds and stage moves are few). */
const SCAN_PAGE = 100;

/** One page of the account's reassignments, newest first, after `after` (a `created_at#id` position): the account's jobs read newest first, the others skipped. */
export async function queryReassignments(accountId: string, limit: number, after?: string): Promise<Reassignment[]> {
  const out: Reassignment[] = [];
  let from = after;
  for (;;) {
    const page = (await queryNewestFirst(keys.indexBuildListPartition(accountId), SCAN_PAGE, from)) as unknown as IndexBuildItem[];
    for (const job of page) if (job.action === 'reassign' && out.length < limit) out.push(job);
    if (out.length >= limit || page.length < SCAN_PAGE) return out;
    from = positionOf(page[page.length - 1]!);
  }
}
/** A stage move's job item and marker, for the pipelines-update transaction that asks for it. */
export const stageMoveItems = (item: StageMove) => store.insertItems(item);
/** Takes a build for one worker (shared/db/job-lease.ts). */
export const leaseIndexBuild = (job: IndexBuildItem, terms: LeaseTerms<IndexBuildItem, IndexBuildStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts). */
export const indexBuildRecovery = () => recoverableJobs<IndexBuildItem, IndexBuildStatus>(store, { queued: 'queued', running: 'processing' });
export const listActiveIndexBuilds = store.listActive;
export const clearActiveIndexBuild = store.clearActive;
