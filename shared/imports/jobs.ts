/**
 * Import jobs (contract §10): create (inline CSV or a presigned upload URL), start, get, list,
 * cancel and the row errors. The rows themselves are applied by the worker
 * (shared/imports/worker.ts), fed by the import queue.
 */
import { apiShape } from '../schemas/resource.js';
import { randomUUID } from 'node:crypto';
import { cursorScope, listPosition } from '../domain/listing.js';
import {
  getImportItem,
  type ImportItem,
  type ImportStatus,
  insertImport,
  markImportActive,
  queryImports,
  queryRowErrors,
  rowErrorPosition,
  updateImportItem,
} from '../db/imports.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { enqueueImport, fileSize, objectKeyOf, putFile, uploadUrl } from './storage.js';
import {

  type ImportCreateInput,
  type ImportErrorsInput,
  type ImportListInput,
  type ImportRecord,
  type ImportRowError,
  MAX_FILE_BYTES,
  UPLOAD_URL_TTL_SECONDS,
  importSchema,
} from '../schemas/imports.js';
import type { OperationContext } from '../domain/context.js';

export const importToApi: (item: ImportItem) => ImportRecord = apiShape(importSchema);

const FINISHED: readonly ImportStatus[] = ['completed', 'failed', 'canceled'];

async function requireImport(ctx: OperationContext, id: string): Promise<ImportItem> {
  const item = await getImportItem(ctx.accountId, id);
  if (!item) throw notFound('imports', 'import');
  return item;
}

export async function createImport(ctx: OperationContext, input: ImportCreateInput): Promise<ImportRecord & { upload_url?: string }> {
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
    // The inline file goes through the same bucket as an upload: one worker path for both.
    await putFile(objectKey, input.csv!);
    await insertImport(item);
    await markImportActive(ctx.accountId, id);
    await enqueueImport({ account_id: ctx.accountId, import_id: id });
    return importToApi(item);
  }
  await insertImport(item);
  return { ...importToApi(item), upload_url: await uploadUrl(objectKey, UPLOAD_URL_TTL_SECONDS) };
}

/** imports-start: a job whose file was uploaded is queued. */
export async function startImport(ctx: OperationContext, id: string): Promise<ImportRecord> {
  const item = await requireImport(ctx, id);
  if (item.status !== 'awaiting_upload') throw new ApiError('imports.conflict', `the import is ${item.status}; only an import awaiting its upload can be started`);
  const size = await fileSize(item.object_key);
  if (size === undefined) throw invalidRequest('imports', 'nothing was uploaded: PUT the file to upload_url first', [{ path: 'id', message: 'no file uploaded' }]);
  if (size === 0) throw invalidRequest('imports', 'the uploaded file is empty: PUT a CSV file with a header row to upload_url', [{ path: 'id', message: 'file is 0 bytes' }]);
  if (size > MAX_FILE_BYTES) throw invalidRequest('imports', 'the uploaded file is larger than 50 MB', [{ path: 'id', message: `file is ${size} bytes` }]);
  const queued = await updateImportItem(ctx.accountId, id, { status: 'queued', updated_at: new Date().toISOString() }, { statusIn: ['awaiting_upload'] });
  if (!queued) throw new ApiError('imports.conflict', 'the import was started or canceled meanwhile');
  await markImportActive(ctx.accountId, id);
  await enqueueImport({ account_id: ctx.accountId, import_id: id });
  return importToApi(queued);
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

interface Paged<T> {
  items: T[];
  next_cursor: string;
}

/** imports-list: the account's imports, newest first. */
export async function listImports(ctx: OperationContext, input: ImportListInput): Promise<Paged<ImportRecord>> {
  const { after, next } = await cursorScope(ctx, 'imports', input.cursor, {});
  const items = await queryImports(ctx.accountId, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return { items: page.map(importToApi), next_cursor: next(items.length > input.limit && last ? listPosition(last) : undefined) };
}

/** imports-errors: the row errors of an import in row order. */
export async function listImportErrors(ctx: OperationContext, input: ImportErrorsInput): Promise<Paged<ImportRowError>> {
  await requireImport(ctx, input.import_id);
  const { after, next } = await cursorScope(ctx, 'imports', input.cursor, { import_id: input.import_id });
  const items = await queryRowErrors(ctx.accountId, input.import_id, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((e) => ({ row_number: e.row_number, column: e.column, code: e.code, message: e.message, value: e.value, created_at: e.created_at }) as ImportRowError),
    next_cursor: next(items.length > input.limit && last ? rowErrorPosition(ctx.accountId, input.import_id, last.row_number) : undefined),
  };
}
