/**
 * Index builds (contract §17): applying a change of a custom field's `indexed` to the account's
 * existing records; and stage moves (§19), the projects of a pipeline's removed stages moved. One item per build, moved by the job store's conditional updates (status,
 * saved position, the worker's lease: shared/db/jobs.ts), and a marker while it runs.
 */
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { jobStore } from './jobs.js';
import { keys } from './table.js';
import type { FieldType } from '../schemas/filter.js';

export type IndexBuildStatus = 'processing' | 'completed' | 'superseded';

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

/** A job of the index-build queue. */
export type IndexBuildItem = FieldBuild | StageMove;

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
/** A stage move's job item and marker, for the pipelines-update transaction that asks for it. */
export const stageMoveItems = (item: StageMove) => store.insertItems(item);
/** Takes a build for one worker (shared/db/job-lease.ts). */
export const leaseIndexBuild = (job: IndexBuildItem, terms: LeaseTerms<IndexBuildItem, IndexBuildStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts). */
export const indexBuildRecovery = () => recoverableJobs<IndexBuildItem, IndexBuildStatus>(store, { running: 'processing' });
export const listActiveIndexBuilds = store.listActive;
export const clearActiveIndexBuild = store.clearActive;
