/**
 * Export jobs (contract §16). One item per job (sk `EXP`); GSI1 lists an account's jobs newest
 * first. Every state change is a conditional update on the job's status (and, for a worker, on
 * the lease it holds), so two deliveries of one queue message cannot both write the file, and a
 * worker that lost its lease cannot mark the job completed.
 */
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { type JobCondition, jobStore } from './jobs.js';
import { keys } from './table.js';

export type ExportStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'expired';
export type ExportObjectType = 'contacts' | 'companies' | 'projects' | 'activities';

export interface ExportItem {
  id: string;
  account_id: string;
  created_by: string;
  object_type: ExportObjectType;
  /** The list filters, as validated (no cursor, no limit). */
  filters: Record<string, unknown>;
  status: ExportStatus;
  total_rows: number | null;
  processed_rows: number;
  failure_reason: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Where the file is written (the exports prefix of the bucket). */
  object_key: string;
  /** The multipart upload of the attempt in progress (aborted by the next attempt). */
  upload_id?: string;
  /** Attempts started (a restart after a crash starts the file again, at most MAX_EXPORT_ATTEMPTS times). */
  attempts: number;
  /** The worker working on the job and until when (epoch ms): one at a time; a dead one's lease runs out. */
  lease_owner?: string;
  lease_until?: number;
}

const store = jobStore<ExportItem, 'export_id'>({
  job: keys.exportJob,
  gsi: keys.exportGsi,
  listPartition: keys.exportListPartition,
  active: keys.activeExport,
  activePartition: keys.activeExportsPartition,
  activeIdAttr: 'export_id',
});

export type ExportCondition = Omit<JobCondition<ExportStatus>, 'position'>;
export const insertExport = store.insert;
export const getExportItem = store.get;
/** One page of the account's export jobs, newest first, after `after` (a `created_at#id` position). */
export const queryExports = store.query;
/** Sets fields of a job (and adds to `attempts`) when the condition holds; the job as written, or undefined. */
export const updateExportItem = (accountId: string, id: string, set: Partial<ExportItem>, cond: ExportCondition, add: Partial<Record<'attempts', number>> = {}) =>
  store.update(accountId, id, set, cond, add as Record<string, number>);

/** Takes a job for one worker (shared/db/job-lease.ts). */
export const leaseExport = (job: ExportItem, terms: LeaseTerms<ExportItem, ExportStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts). */
export const exportRecovery = () => recoverableJobs<ExportItem, ExportStatus>(store, { queued: 'queued', running: 'processing' });

/** Queued jobs' markers (see `keys.activeExport`). */
export const markExportActive = store.markActive;
