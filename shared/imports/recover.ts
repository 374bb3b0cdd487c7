/**
 * Re-queues import jobs whose queue message is gone. Local mode's queue lives in memory, so a
 * restart with a data directory (even after a crash) loses the messages of queued and running
 * jobs; contract §7 wants them carried out after it. Each queued job left a marker
 * (`keys.activeImport`); a job still `queued` or `processing` is queued again (the worker's
 * lease and per-chunk progress make a second message harmless: it resumes after the last saved
 * chunk), and the markers of jobs that have ended are removed.
 */
import { clearActiveImport, getImportItem, listActiveImports } from '../db/imports.js';
import { enqueueImport } from './storage.js';

export async function recoverImports(): Promise<{ requeued: number; cleared: number }> {
  let requeued = 0;
  let cleared = 0;
  for (const { account_id, import_id } of await listActiveImports()) {
    const job = await getImportItem(account_id, import_id);
    if (job && (job.status === 'queued' || job.status === 'processing')) {
      await enqueueImport({ account_id, import_id });
      requeued++;
    } else {
      await clearActiveImport(account_id, import_id);
      cleared++;
    }
  }
  return { requeued, cleared };
}
