/**
 * Reassignments (contract §20). One item per job (sk `RSG`), listed newest first on GSI1, moved
 * by the job store's conditional updates (status, saved position, the worker's lease:
 * shared/db/jobs.ts), and a marker while it is queued or running. The worker is the index-build
 * queue's (shared/indexing/reassignments.ts): the same lease, places and fairness.
 */
import type { ReassignmentStatus, ReassignmentType } from '../schemas/reassignments.js';
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { jobStore } from './jobs.js';
import { keys } from './table.js';

export interface ReassignmentItem {
  id: string;
  account_id: string;
  created_by: string;
  status: ReassignmentStatus;
  from_owner_id: string;
  to_owner_id: string | null;
  types: ReassignmentType[];
  processed: number;
  changed: number;
  created_at: string;
  completed_at: string | null;
  /** Pages saved (the job store's saved position). */
  position: number;
  /** Where the walk is: the index in `types`, and the last referencing entry done in that family (absent: from its start). */
  type_index: number;
  after?: string;
  lease_owner?: string;
  lease_until?: number;
}

const store = jobStore<ReassignmentItem, 'reassignment_id'>({
  job: keys.reassignmentJob,
  gsi: keys.reassignmentGsi,
  listPartition: keys.reassignmentListPartition,
  active: keys.activeReassignment,
  activePartition: keys.activeReassignmentsPartition,
  activeIdAttr: 'reassignment_id',
});

/** Inserts the job and its marker (a restarted local mode finds it). */
export async function insertReassignment(item: ReassignmentItem): Promise<void> {
  await store.insert(item);
  await store.markActive(item.account_id, item.id);
}
export const getReassignmentItem = store.get;
/** One page of the account's reassignments, newest first, after `after` (a `created_at#id` position). */
export const queryReassignments = store.query;
/** Takes a job for one worker (shared/db/job-lease.ts). */
export const leaseReassignment = (job: ReassignmentItem, terms: LeaseTerms<ReassignmentItem, ReassignmentStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts). */
export const reassignmentRecovery = () => recoverableJobs<ReassignmentItem, ReassignmentStatus>(store, { queued: 'queued', running: 'running' });
export const clearActiveReassignment = store.clearActive;
