/**
 * Re-queues import jobs whose queue message is gone. Local mode's queue lives in memory, so a
 * restart with a data directory (even after a crash) loses the messages of queued and running
 * jobs; contract §7 wants them carried out after it. Each queued job left a marker
 * (`keys.activeImport`); a job still `queued` or `processing` is queued again (the worker's
 * lease and per-chunk progress make a second message harmless: it resumes after the last saved
 * chunk), and the markers of jobs that have ended are removed.
 */
import { clearActiveImport, getImportItem, listActiveImports, updateImportItem } from '../db/imports.js';
import { enqueueImport } from './storage.js';

/**
 * `releaseLeases`: the caller knows no worker is alive (local mode at start: one process, the
 * previous one is gone), so a running job's lease is released and the job is taken over at once
 * instead of after the lease runs out.
 */
export async function recoverImports(opts: { releaseLeases?: boolean } = {}): Promise<{ requeued: number; cleared: number }> {
  let requeued = 0;
  let cleared = 0;
  for (const { account_id, import_id } of await listActiveImports()) {
    const job = await getImportItem(account_id, import_id);
    if (job && (job.status === 'queued' || job.status === 'processing')) {
      if (opts.releaseLeases && job.status === 'processing') await updateImportItem(account_id, import_id, { lease_until: 0 }, { statusIn: ['processing'] });
      await enqueueImport({ account_id, import_id });
      requeued++;
    } else {
      await clearActiveImport(account_id, import_id);
      cleared++;
    }
  }
  return { requeued, cleared };
}
