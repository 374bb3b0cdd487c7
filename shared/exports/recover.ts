/**
 * Re-queues export jobs whose queue message is gone (local mode's queue lives in memory), as
 * shared/imports/recover.ts does for imports: a job still `queued` or `processing` is queued
 * again; the worker that takes it starts its file again (a new multipart upload; the
 * interrupted one is aborted), so no truncated file is ever marked completed. The markers of
 * jobs that have ended are removed.
 */
import { clearActiveExport, getExportItem, listActiveExports, updateExportItem } from '../db/exports.js';
import { enqueueExport } from './storage.js';

/** `releaseLeases`: no worker is alive (local mode at start), so a running job is taken over at once. */
export async function recoverExports(opts: { releaseLeases?: boolean } = {}): Promise<{ requeued: number; cleared: number }> {
  let requeued = 0;
  let cleared = 0;
  for (const { account_id, export_id } of await listActiveExports()) {
    const job = await getExportItem(account_id, export_id);
    if (job && (job.status === 'queued' || job.status === 'processing')) {
      if (opts.releaseLeases && job.status === 'processing') await updateExportItem(account_id, export_id, { lease_until: 0 }, { statusIn: ['processing'] });
      await enqueueExport({ account_id, export_id });
      requeued++;
    } else {
      await clearActiveExport(account_id, export_id);
      cleared++;
    }
  }
  return { requeued, cleared };
}
