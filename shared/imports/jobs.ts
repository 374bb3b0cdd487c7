/**
 * Import jobs (contract §10): create (inline CSV or a presigned upload URL), start, get, list,
 * cancel and the row errors. A job's items and file are the domain's (shared/domain/imports.ts);
 * here a job that becomes `queued` gets its queue message. The rows themselves are applied by the
 * worker (shared/imports/worker.ts), fed by the import queue.
 */
import type { OperationContext } from '../domain/context.js';
import { importToApi, newImport, queueUploaded } from '../domain/imports.js';
import type { ImportCreateInput, ImportRecord } from '../schemas/imports.js';
import { enqueueImport } from './storage.js';

export { cancelImport, getImport, listImportErrors, listImports } from '../domain/imports.js';

export async function createImport(ctx: OperationContext, input: ImportCreateInput): Promise<ImportRecord & { upload_url?: string }> {
  const { item, upload_url } = await newImport(ctx, input);
  if (item.status === 'queued') await enqueueImport({ account_id: ctx.accountId, import_id: item.id });
  return { ...importToApi(item), ...(upload_url !== undefined ? { upload_url } : {}) };
}

/** imports-start: a job whose file was uploaded is queued. */
export async function startImport(ctx: OperationContext, id: string): Promise<ImportRecord> {
  const queued = await queueUploaded(ctx, id);
  await enqueueImport({ account_id: ctx.accountId, import_id: id });
  return importToApi(queued);
}
