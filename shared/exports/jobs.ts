/**
 * Export jobs (contract §16): create, get, list. The file itself is written by the worker
 * (shared/exports/worker.ts), fed by the export queue.
 */
import { randomUUID } from 'node:crypto';
import { type ExportItem, getExportItem, insertExport, markExportActive, queryExports } from '../db/exports.js';
import type { OperationContext } from '../domain/context.js';
import { cursorScope, listPosition } from '../domain/listing.js';
import { notFound } from '../errors.js';
import { resolveQuery } from '../domain/records/query.js';
import { DOWNLOAD_URL_TTL_SECONDS, EXPORT_ENTITIES, type ExportCreateInput, type ExportListInput, type ExportRecord } from '../schemas/exports.js';
import { downloadUrl, enqueueExport, exportKeyOf } from './storage.js';

/** The API view of a job, given its download URL (null unless completed). */
function exportView(item: ExportItem, url: string | null, now: number): ExportRecord {
  return {
    id: item.id,
    account_id: item.account_id,
    created_by: item.created_by,
    object_type: item.object_type,
    filters: item.filters ?? {},
    status: item.status,
    total_rows: item.total_rows,
    processed_rows: item.processed_rows,
    download_url: url,
    expires_at: url === null ? null : new Date(now + DOWNLOAD_URL_TTL_SECONDS * 1000).toISOString(),
    failure_reason: item.failure_reason,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/** The API view: a completed export gets a fresh presigned GET, valid 15 minutes from now. */
export async function exportToApi(item: ExportItem, now = Date.now()): Promise<ExportRecord> {
  return exportView(item, item.status === 'completed' ? await downloadUrl(item.object_key, DOWNLOAD_URL_TTL_SECONDS) : null, now);
}

export async function createExport(ctx: OperationContext, input: ExportCreateInput): Promise<ExportRecord> {
  // `filter` and `sort` (contract §17) are checked now, with the account's custom fields, as the list would.
  await resolveQuery(EXPORT_ENTITIES[input.object_type], ctx.accountId, input.filters, 'exports', 'filters.filter');
  const id = randomUUID();
  const now = new Date().toISOString();
  const item: ExportItem = {
    id,
    account_id: ctx.accountId,
    created_by: ctx.userId,
    object_type: input.object_type,
    filters: input.filters,
    status: 'queued',
    total_rows: null,
    processed_rows: 0,
    failure_reason: '',
    created_at: now,
    updated_at: now,
    completed_at: null,
    object_key: exportKeyOf(ctx.accountId, id),
    attempts: 0,
  };
  await insertExport(item);
  await markExportActive(ctx.accountId, id);
  await enqueueExport({ account_id: ctx.accountId, export_id: id });
  // Queued: no download URL yet (and exports-create bundles no presigner).
  return exportView(item, null, Date.now());
}

export async function getExport(ctx: OperationContext, id: string): Promise<ExportRecord> {
  const item = await getExportItem(ctx.accountId, id);
  if (!item) throw notFound('exports', 'export');
  return exportToApi(item);
}

/** exports-list: the account's exports, newest first. */
export async function listExports(ctx: OperationContext, input: ExportListInput): Promise<{ items: ExportRecord[]; next_cursor: string }> {
  const { after, next } = await cursorScope(ctx, 'exports', input.cursor, {});
  const items = await queryExports(ctx.accountId, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return { items: await Promise.all(page.map((i) => exportToApi(i))), next_cursor: next(items.length > input.limit && last ? listPosition(last) : undefined) };
}
