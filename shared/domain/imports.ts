/**
 * Import jobs (contract §10) as stored: a job's record and its changes of state (created,
 * queued once its file is uploaded, canceled; a worker's lease, each chunk's progress, its end),
 * its rows' errors and its file in the imports bucket. The API operations (shared/imports/jobs.ts)
 * and the worker (shared/imports/worker.ts) reach the job's items and its file only through
 * here; sending the queue's message is theirs (shared/imports/storage.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { bindingEnv } from '../config/bindings.js';
import { requireEnv } from '../config/env.js';
import {
  getImportItem,
  type ImportItem,
  type ImportStatus,
  insertImport,
  leaseImport,
  markImportActive,
  putRowErrors,
  queryImports,
  queryRowErrors,
  type RowErrorItem,
  rowErrorPosition,
  updateImportItem,
} from '../db/imports.js';
import { pageOf } from '../db/expr.js';
import type { JobLease } from '../db/job-lease.js';
import { objectSize, openObject, presignedPutUrl, putObject } from '../db/objects.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { apiShape } from '../schemas/resource.js';
import {
  type ImportCreateInput,
  type ImportErrorsInput,
  type ImportListInput,
  type ImportRecord,
  type ImportRowError,
  importSchema,
  MAX_FILE_BYTES,
  UPLOAD_URL_TTL_SECONDS,
} from '../schemas/imports.js';
import type { OperationContext } from './context.js';
import { cursorScope, listPosition, type Page } from './listing.js';

export type { ImportItem, ImportStatus, RowErrorItem };
/** A job held by one worker (shared/db/job-lease.ts). */
export type ImportLease = JobLease<ImportItem, ImportStatus>;
export { importRecovery } from '../db/imports.js';

// --- the file --------------------------------------------------------------------------------

const importsBucket = () => requireEnv(bindingEnv('importsBucket'));

/** Object key of an import's file: by account and import id (never the client's file name). */
const objectKeyOf = (accountId: string, importId: string) => `imports/${accountId}/${importId}.csv`;

/** The file's size in bytes, or undefined when nothing was uploaded. */
export const fileSize = (key: string) => objectSize(importsBucket(), key);

/** The file as a stream of bytes (never read whole). */
export const openFile = (key: string): Promise<Readable> => openObject(importsBucket(), key);

// --- the API's side --------------------------------------------------------------------------

export const importToApi: (item: ImportItem) => ImportRecord = apiShape(importSchema);

const FINISHED: readonly ImportStatus[] = ['completed', 'failed', 'canceled'];

async function requireImport(ctx: OperationContext, id: string): Promise<ImportItem> {
  const item = await getImportItem(ctx.accountId, id);
  if (!item) throw notFound('imports', 'import');
  return item;
}

/**
 * A new job: an inline file is put in the bucket (one worker path for both) and the job is
 * `queued` (the caller sends its message); else it is `awaiting_upload` with the URL to PUT the
 * file to.
 */
export async function newImport(ctx: OperationContext, input: ImportCreateInput): Promise<{ item: ImportItem; upload_url?: string }> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const objectKey = objectKeyOf(ctx.accountId, id);
  const inline = input.csv !== undefined;
  const item: ImportItem = {
    id,
    account_id: ctx.accountId,
    created_by: ctx.userId,
    object_type: input.object_type,
    mode: input.mode,
    file_name: input.file_name,
    status: inline ? 'queued' : 'awaiting_upload',
    total_rows: null,
    processed_rows: 0,
    created_count: 0,
    updated_count: 0,
    error_count: 0,
    failure_reason: '',
    unmapped_columns: [],
    started_at: null,
    completed_at: null,
    created_at: now,
    updated_at: now,
    object_key: objectKey,
    position: 0,
  };
  if (inline) {
    await putObject(importsBucket(), objectKey, input.csv!, 'text/csv; charset=utf-8');
    await insertImport(item);
    await markImportActive(ctx.accountId, id);
    return { item };
  }
  await insertImport(item);
  return { item, upload_url: await presignedPutUrl(importsBucket(), objectKey, UPLOAD_URL_TTL_SECONDS) };
}

/** imports-start's state change: a job whose file was uploaded (and fits) becomes `queued` (the caller sends its message). */
export async function queueUploaded(ctx: OperationContext, id: string): Promise<ImportItem> {
  const item = await requireImport(ctx, id);
  if (item.status !== 'awaiting_upload') throw new ApiError('imports.conflict', `the import is ${item.status}; only an import awaiting its upload can be started`);
  const size = await fileSize(item.object_key);
  if (size === undefined) throw invalidRequest('imports', 'nothing was uploaded: PUT the file to upload_url first', [{ path: 'id', message: 'no file uploaded' }]);
  if (size === 0) throw invalidRequest('imports', 'the uploaded file is empty: PUT a CSV file with a header row to upload_url', [{ path: 'id', message: 'file is 0 bytes' }]);
  if (size > MAX_FILE_BYTES) throw invalidRequest('imports', 'the uploaded file is larger than 50 MB', [{ path: 'id', message: `file is ${size} bytes` }]);
  const queued = await updateImportItem(ctx.accountId, id, { status: 'queued', updated_at: new Date().toISOString() }, { statusIn: ['awaiting_upload'] });
  if (!queued) throw new ApiError('imports.conflict', 'the import was started or canceled meanwhile');
  await markImportActive(ctx.accountId, id);
  return queued;
}

export async function getImport(ctx: OperationContext, id: string): Promise<ImportRecord> {
  return importToApi(await requireImport(ctx, id));
}

/** imports-cancel: no further rows are applied; rows already applied stay. Canceling a canceled import returns it. */
export async function cancelImport(ctx: OperationContext, id: string): Promise<ImportRecord> {
  const item = await requireImport(ctx, id);
  if (item.status === 'canceled') return importToApi(item);
  if (FINISHED.includes(item.status)) throw new ApiError('imports.conflict', `the import is already ${item.status}`);
  const now = new Date().toISOString();
  const canceled = await updateImportItem(ctx.accountId, id, { status: 'canceled', completed_at: now, updated_at: now }, { statusIn: ['awaiting_upload', 'queued', 'processing'] });
  if (canceled) return importToApi(canceled);
  // It finished meanwhile: report what it is now.
  const current = await requireImport(ctx, id);
  if (current.status === 'canceled') return importToApi(current);
  throw new ApiError('imports.conflict', `the import is already ${current.status}`);
}

/** imports-list: the account's imports, newest first. */
export async function listImports(ctx: OperationContext, input: ImportListInput): Promise<Page<ImportRecord>> {
  const { after, next } = await cursorScope(ctx, 'imports', input.cursor, {});
  const { items, next: position } = pageOf(await queryImports(ctx.accountId, input.limit + 1, after), input.limit, listPosition);
  return { items: items.map(importToApi), next_cursor: next(position) };
}

/** imports-errors: the row errors of an import in row order. */
export async function listImportErrors(ctx: OperationContext, input: ImportErrorsInput): Promise<Page<ImportRowError>> {
  await requireImport(ctx, input.import_id);
  const { after, next } = await cursorScope(ctx, 'imports', input.cursor, { import_id: input.import_id });
  const found = await queryRowErrors(ctx.accountId, input.import_id, input.limit + 1, after);
  const { items, next: position } = pageOf(found, input.limit, (e) => rowErrorPosition(ctx.accountId, input.import_id, e.row_number));
  return {
    items: items.map((e) => ({ row_number: e.row_number, column: e.column, code: e.code, message: e.message, value: e.value, created_at: e.created_at }) as ImportRowError),
    next_cursor: next(position),
  };
}

// --- the worker's side -----------------------------------------------------------------------

/**
 * Takes the job of a queue message for this worker: a `queued` job starts (`processing`,
 * `started_at` set), a running one is taken over once its lease ran out. Undefined when there is
 * nothing to work on (gone, ended, canceled); throws LeaseHeld when another worker holds it.
 */
export async function leaseImportJob(accountId: string, id: string, leaseMs: number): Promise<ImportLease | undefined> {
  const found = await getImportItem(accountId, id);
  const now = new Date().toISOString();
  return found && leaseImport(found, { running: 'processing', from: 'queued', started: { started_at: now, updated_at: now }, leaseMs });
}

/** The job failed (`reason`: the file's problem); false when the lease was lost meanwhile. */
export async function failImport(lease: ImportLease, reason: string): Promise<boolean> {
  const now = new Date().toISOString();
  return Boolean(await lease.end({ status: 'failed', failure_reason: reason, completed_at: now, updated_at: now }));
}

/** The first pass's findings (rows counted, columns no field takes), saved once; the job as written, or undefined when the lease was lost. */
export async function saveFileCounted(lease: ImportLease, total: number, unmapped: string[]): Promise<ImportItem | undefined> {
  const now = new Date().toISOString();
  return lease.save({ total_rows: total, unmapped_columns: unmapped, updated_at: now, chunk_time: now }, { position: lease.job.position });
}

/** What one chunk of rows did. */
export interface ChunkDone {
  rows: number;
  created: number;
  updated: number;
  errors: RowErrorItem[];
}

/**
 * A chunk's rows errors written, then (`between`: the worker's hook) its progress saved once, from
 * `job` at `from` to `to` (CSV records consumed), counters added; a chunk applied while the job
 * was canceled still counts (its rows stay applied). The job as written, or undefined when the
 * lease was lost or another attempt saved this chunk.
 */
export async function saveChunk(lease: ImportLease, job: ImportItem, done: ChunkDone, from: number, to: number, between?: () => Promise<void>): Promise<ImportItem | undefined> {
  if (done.errors.length) await putRowErrors(job.account_id, job.id, done.errors);
  await between?.();
  const now = new Date().toISOString();
  return lease.save(
    {
      position: to,
      processed_rows: job.processed_rows + done.rows,
      created_count: job.created_count + done.created,
      updated_count: job.updated_count + done.updated,
      error_count: job.error_count + done.errors.length,
      updated_at: now,
      chunk_time: now,
    },
    { statusIn: ['processing', 'canceled'], position: from },
  );
}

/** Every row applied (the file read to `position`): the job is completed; false when the lease was lost. */
export async function completeImport(lease: ImportLease, position: number): Promise<boolean> {
  const now = new Date().toISOString();
  return Boolean(await lease.end({ status: 'completed', completed_at: now, updated_at: now }, { position }));
}
