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
import { randomUUID } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import { type ExportItem, getExportItem, updateExportItem } from '../db/exports.js';
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

/** Another worker holds the job's lease: this message must come back later, in case that worker dies. */
export class ExportLeaseHeld extends Error {}

/** RFC 4180: CRLF between records; quotes around a cell with a comma, a quote, CR or LF. */
const csv = (rows: string[][]) => stringify(rows, { record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
const BOM = '\uFEFF';

async function fail(job: ExportItem, reason: string, owner: string): Promise<ExportOutcome> {
  const now = new Date().toISOString();
  const out = await updateExportItem(job.account_id, job.id, { status: 'failed', failure_reason: reason, completed_at: now, updated_at: now, lease_until: 0 }, { statusIn: ['processing'], lease: { owner, mode: 'held', now: Date.now() } });
  return out ? 'failed' : 'skipped';
}

/** Works on one job until its file is complete (or the job failed). Throws on unexpected errors: the message comes back and the job restarts. */
export async function runExport(message: ExportMessage, deps: ExportWorkerDeps = {}): Promise<ExportOutcome> {
  const opts = { ...DEFAULTS, ...deps };
  const owner = randomUUID();
  const job = await getExportItem(message.account_id, message.export_id);
  if (!job || (job.status !== 'queued' && job.status !== 'processing')) return 'skipped';
  const now = new Date().toISOString();
  const lease = { lease_owner: owner, lease_until: Date.now() + opts.leaseMs, updated_at: now };
  const taken =
    job.status === 'queued'
      ? await updateExportItem(job.account_id, job.id, { status: 'processing', ...lease }, { statusIn: ['queued'] }, { attempts: 1 })
      : await updateExportItem(job.account_id, job.id, lease, { statusIn: ['processing'], lease: { owner, mode: 'take', now: Date.now() } }, { attempts: 1 });
  if (!taken) {
    const current = await getExportItem(message.account_id, message.export_id);
    if (current?.status === 'processing') throw new ExportLeaseHeld(`export ${message.export_id} is being worked on by another worker`);
    return 'skipped';
  }
  if (taken.upload_id) await fileUpload.abort(taken.object_key, taken.upload_id).catch(() => undefined);
  if (taken.attempts > MAX_EXPORT_ATTEMPTS) return fail(taken, `the export was interrupted ${MAX_EXPORT_ATTEMPTS} times before its file was complete; create it again`, owner);
  try {
    return await work(taken, opts, owner);
  } catch (error) {
    // Let the queue's next delivery take over at once (best effort; otherwise the lease runs out).
    await updateExportItem(job.account_id, job.id, { lease_until: 0 }, { statusIn: ['processing'], lease: { owner, mode: 'held', now: Date.now() } }).catch(() => undefined);
    throw error;
  }
}

async function work(job: ExportItem, opts: typeof DEFAULTS & ExportWorkerDeps, owner: string): Promise<ExportOutcome> {
  const held = () => ({ owner, mode: 'held' as const, now: Date.now() });
  const lost = async (): Promise<ExportOutcome> => {
    const current = await getExportItem(job.account_id, job.id);
    if (current?.status === 'processing') throw new ExportLeaseHeld(`export ${job.id} was taken over by another worker`);
    return 'skipped';
  };
  const key = job.object_key || exportKeyOf(job.account_id, job.id);
  const uploadId = await fileUpload.start(key);
  const started = await updateExportItem(job.account_id, job.id, { upload_id: uploadId, processed_rows: 0, total_rows: null, updated_at: new Date().toISOString(), lease_until: Date.now() + opts.leaseMs }, { statusIn: ['processing'], lease: held() });
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
      const saved = await updateExportItem(job.account_id, job.id, { processed_rows: rows, updated_at: new Date().toISOString(), lease_until: Date.now() + opts.leaseMs }, { statusIn: ['processing'], lease: held() });
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
  const done = await updateExportItem(
    job.account_id,
    job.id,
    { status: 'completed', total_rows: rows, processed_rows: rows, completed_at: now, updated_at: now, lease_until: 0 },
    { statusIn: ['processing'], lease: held() },
  );
  return done ? 'completed' : lost();
}
