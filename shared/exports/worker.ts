/**
 * The export worker (contract §16): reads the object's list page by page (the same domain call
 * and filters as its `-list`), turns each page into CSV rows (the columns of
 * shared/imports/mapping.ts, RFC 4180 by csv-stringify, UTF-8 with a BOM) and streams them to
 * the object store as a multipart upload: a part is sent once at least `partBytes` (5 MiB, S3's
 * minimum) are buffered, so memory holds one page and at most two parts, whatever the size of
 * the list.
 *
 * Crash and restart: one worker holds the job's lease (renewed with every progress save). The
 * file only appears when its upload completes, and the job is marked completed only after that,
 * by the worker still holding the lease. A worker that dies leaves an unfinished upload and the
 * job `processing`; its message comes back (or, locally, recovery re-queues it) and the next
 * worker aborts that upload and writes the file again from the first row (`processed_rows`
 * starts again at 0). After MAX_EXPORT_ATTEMPTS interrupted attempts the job fails with a
 * reason. So a truncated file is never marked completed.
 */
import { stringify } from 'csv-stringify/sync';
import { type ExportItem, type ExportStatus, getExportItem, leaseExport } from '../db/exports.js';
import type { JobLease } from '../db/job-lease.js';
import { batchGetRecords } from '../db/items.js';
import { MIN_PART_BYTES, type UploadedPart } from '../db/objects.js';
import type { OperationContext } from '../domain/context.js';
import { listDefinitions } from '../domain/custom-fields.js';
import { familyOf } from '../domain/records/family.js';
import { list } from '../domain/records/list.js';
import { exportColumns, recordCells } from '../imports/mapping.js';
import { EXPORT_ENTITIES } from '../schemas/exports.js';
import { customField } from '../schemas/entities/index.js';
import { type ExportMessage, exportKeyOf, exportQueueFairness, fileUpload } from './storage.js';

export interface ExportWorkerDeps {
  /** Records read per list page (default 100, the list's maximum). */
  pageSize?: number;
  /** Bytes buffered before a part is uploaded (default 5 MiB; S3 rejects smaller parts but the last). */
  partBytes?: number;
  /** How long a worker holds a job without saving progress before another may take it over (default 2 minutes). */
  leaseMs?: number;
  /** Called after each page was turned into rows (tests inject crashes here). */
  afterPage?: (progress: { rows: number; parts: number }) => void | Promise<void>;
}

export type ExportOutcome = 'completed' | 'failed' | 'skipped';

export const EXPORT_LEASE_MS = 120_000;
/** Attempts (first run and restarts after a crash) before the job fails. */
export const MAX_EXPORT_ATTEMPTS = 3;
/** One of an account's exports runs at once (the queue runs 2 locally, 5 deployed: functions/topology.ts; shared/http/job-handler.ts). */
export const exportFairness = exportQueueFairness('exports', 1);

const DEFAULTS = { pageSize: 100, partBytes: MIN_PART_BYTES, leaseMs: EXPORT_LEASE_MS };
/** Progress is saved (and the lease renewed) at most this often, and with every part. */
const SAVE_EVERY_MS = 500;

/** RFC 4180: CRLF between records; quotes around a cell with a comma, a quote, CR or LF. */
const csv = (rows: string[][]) => stringify(rows, { record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
const BOM = '\uFEFF';

/** Works on one job until its file is complete (or the job failed). Throws on unexpected errors: the message comes back and the job restarts. */
export async function runExport(message: ExportMessage, deps: ExportWorkerDeps = {}): Promise<ExportOutcome> {
  const opts = { ...DEFAULTS, ...deps };
  const job = await getExportItem(message.account_id, message.export_id);
  const lease = job && (await leaseExport(job, { running: 'processing', from: 'queued', set: { updated_at: new Date().toISOString() }, add: { attempts: 1 }, leaseMs: opts.leaseMs }));
  if (!lease) return 'skipped';
  const taken = lease.job;
  if (taken.upload_id) await fileUpload.abort(taken.object_key, taken.upload_id).catch(() => undefined);
  if (taken.attempts > MAX_EXPORT_ATTEMPTS) {
    const now = new Date().toISOString();
    const failed = await lease.end({ status: 'failed', failure_reason: `the export was interrupted ${MAX_EXPORT_ATTEMPTS} times before its file was complete; create it again`, completed_at: now, updated_at: now });
    return failed ? 'failed' : 'skipped';
  }
  try {
    return await work(lease, opts);
  } catch (error) {
    // Let the queue's next delivery take over at once (otherwise the lease runs out).
    await lease.release();
    throw error;
  }
}

async function work(lease: JobLease<ExportItem, ExportStatus>, opts: typeof DEFAULTS & ExportWorkerDeps): Promise<ExportOutcome> {
  const job = lease.job;
  const lost = async (): Promise<ExportOutcome> => {
    await lease.lost();
    return 'skipped';
  };
  const key = job.object_key || exportKeyOf(job.account_id, job.id);
  const uploadId = await fileUpload.start(key);
  const started = await lease.save({ upload_id: uploadId, processed_rows: 0, total_rows: null, updated_at: new Date().toISOString() });
  if (!started) {
    await fileUpload.abort(key, uploadId).catch(() => undefined);
    return lost();
  }

  const def = EXPORT_ENTITIES[job.object_type];
  const cf = customField(def);
  const definitions = cf ? await listDefinitions(job.account_id, def.type as 'contact') : [];
  const columns = exportColumns(def, definitions);
  const ctx: OperationContext = { accountId: job.account_id, userId: job.created_by, operation: 'exports-worker', headers: {} };
  const fam = familyOf(def);

  // The file: one buffer of pending bytes, sent as a part once it reaches partBytes; the upload of a part overlaps the next pages.
  const parts: UploadedPart[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let uploading: Promise<void> | undefined;
  const append = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    pending.push(bytes);
    pendingBytes += bytes.length;
  };
  const sendPart = async () => {
    const body = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    await uploading;
    const n = parts.length + 1;
    parts.push({ PartNumber: n, ETag: '' });
    uploading = fileUpload.part(key, uploadId, n, body).then((p) => {
      parts[n - 1] = p;
    });
    uploading.catch(() => undefined); // awaited by the next part or the end
  };

  append(BOM + csv([columns.map((c) => c.header)]));
  const domains = new Map<string, string>();
  let rows = 0;
  let savedAt = Date.now();
  let cursor: string | undefined;
  do {
    const page = await list(fam, ctx, { ...job.filters, limit: opts.pageSize, ...(cursor ? { cursor } : {}) });
    const records = page.items;
    if (def.type === 'contact') {
      const missing = [...new Set(records.map((r) => r.company_id).filter((id): id is string => typeof id === 'string' && !domains.has(id)))];
      if (missing.length) {
        const found = await batchGetRecords('company', job.account_id, missing);
        for (const id of missing) domains.set(id, String(found.get(id)?.domain ?? ''));
      }
    }
    append(csv(records.map((r) => recordCells(columns, r, cf, typeof r.company_id === 'string' ? (domains.get(r.company_id) ?? '') : ''))));
    rows += records.length;
    const partSent = pendingBytes >= opts.partBytes;
    if (partSent) await sendPart();
    await opts.afterPage?.({ rows, parts: parts.length });
    if (partSent || Date.now() - savedAt >= SAVE_EVERY_MS) {
      const saved = await lease.save({ processed_rows: rows, updated_at: new Date().toISOString() });
      if (!saved) {
        await uploading?.catch(() => undefined);
        await fileUpload.abort(key, uploadId).catch(() => undefined);
        return lost();
      }
      savedAt = Date.now();
    }
    cursor = page.next_cursor || undefined;
  } while (cursor);
  if (pendingBytes > 0 || parts.length === 0) await sendPart();
  await uploading;
  await fileUpload.complete(key, uploadId, parts);

  const now = new Date().toISOString();
  const done = await lease.end({ status: 'completed', total_rows: rows, processed_rows: rows, completed_at: now, updated_at: now });
  return done ? 'completed' : lost();
}
