/**
 * Import jobs and their row errors (contract §10). One partition per job holds the job item
 * (sk `IMP`) and one item per row error (sk `E#<row number>`); GSI1 lists an account's jobs
 * newest first. Every state change is a conditional update on the job's status, so a canceled
 * job stops its worker at the next chunk and two deliveries of one queue message cannot both
 * save the same chunk.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { putItems } from './batch.js';
import { exists, merge, partition, project, update } from './expr.js';
import { writeUnlessRefused } from './items.js';
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { type JobCondition, jobStore } from './jobs.js';
import { keys } from './table.js';

export type ImportStatus = 'awaiting_upload' | 'queued' | 'processing' | 'completed' | 'failed' | 'canceled';

export interface ImportItem {
  id: string;
  account_id: string;
  created_by: string;
  object_type: 'contacts' | 'companies' | 'projects';
  mode: 'upsert' | 'create';
  file_name: string;
  status: ImportStatus;
  total_rows: number | null;
  processed_rows: number;
  created_count: number;
  updated_count: number;
  error_count: number;
  failure_reason: string;
  unmapped_columns: string[];
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  /** Where the file is (the imports bucket). */
  object_key: string;
  /** CSV records consumed by finished chunks (blank lines included): where a resumed worker starts. */
  position: number;
  /** Creation time of the records the next chunk creates (saved with the previous chunk: the same on a re-apply). */
  chunk_time?: string;
  /** The worker working on the job and until when (epoch ms): one worker at a time; a dead one's lease runs out. */
  lease_owner?: string;
  lease_until?: number;
}

export interface RowErrorItem {
  row_number: number;
  column: string;
  code: string;
  message: string;
  value: string;
  created_at: string;
}

const store = jobStore<ImportItem, 'import_id'>({
  job: keys.importJob,
  gsi: keys.importGsi,
  listPartition: keys.importListPartition,
  active: keys.activeImport,
  activePartition: keys.activeImportsPartition,
  activeIdAttr: 'import_id',
});

export type ImportCondition = JobCondition<ImportStatus>;
export const insertImport = store.insert;
export const getImportItem = store.get;
/** One page of the account's jobs, newest first, after `after` (a `created_at#id` position). */
export const queryImports = store.query;
/** Sets fields of a job when the condition holds; the job as written, or undefined (missing, or the condition failed). */
export const updateImportItem = (accountId: string, id: string, set: Partial<ImportItem>, cond: ImportCondition) => store.update(accountId, id, set, cond);
/** Takes a job for one worker (shared/db/job-lease.ts). */
export const leaseImport = (job: ImportItem, terms: LeaseTerms<ImportItem, ImportStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts). */
export const importRecovery = () => recoverableJobs<ImportItem, ImportStatus>(store, { queued: 'queued', running: 'processing' });

/** Writes row errors (one item per row: writing a row's error again overwrites it). */
export async function putRowErrors(accountId: string, importId: string, errors: RowErrorItem[]): Promise<void> {
  await putItems(errors.map((e) => ({ ...keys.importError(accountId, importId, e.row_number), ...e })));
}

/** Sort key of the row error of `rowNumber` (the position of the errors' pagination). */
export const rowErrorPosition = (accountId: string, importId: string, rowNumber: number) => keys.importError(accountId, importId, rowNumber).sk;

/** One page of a job's row errors in row order, after `after` (a row error's sort key). */
export async function queryRowErrors(accountId: string, importId: string, limit: number, after?: string): Promise<RowErrorItem[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...merge(
        partition(keys.importPartition(accountId, importId), after ? ['>', after] : ['begins_with', keys.importErrorPrefix]),
        project('row_number', 'column', 'code', 'message', 'value', 'created_at', 'sk'),
      ),
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  // `sk > after` may reach the job item (`IMP` sorts after `E#…`): keep row errors only.
  return (out.Items ?? [])
    .filter((i) => String(i.sk).startsWith(keys.importErrorPrefix))
    .map(({ sk: _sk, ...e }) => e as RowErrorItem);
}

/** Replaces a row error's value and message (an erasure's redaction, contract §18). */
export async function redactRowError(accountId: string, importId: string, rowNumber: number, text: string): Promise<void> {
  await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.importError(accountId, importId, rowNumber),
      ...update({ set: { value: text, message: text } }, exists()),
    },
  });
}

/** Queued jobs' markers (see `keys.activeImport`). */
export const markImportActive = store.markActive;
