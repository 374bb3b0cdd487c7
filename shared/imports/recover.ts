/**
 * Re-queues jobs whose queue message is gone. Local mode's queue lives in memory, so a restart
 * with a data directory (even after a crash) loses the messages of queued and running jobs;
 * contract §7 wants them carried out after it. Each queued job left a marker
 * (`keys.activeImport`, `keys.activeExport`, …; `recoverableJobs`: shared/db/job-lease.ts);
 * a job still `queued` or `processing` is queued
 * again (the worker's lease makes a second message harmless: an import resumes after its last
 * saved chunk, an export starts its file again), and the markers of jobs that have ended are
 * removed.
 */
import { importRecovery } from '../domain/imports.js';
import { enqueueImport } from './storage.js';

/** What recovery needs of a job family (its data-layer store and its queue). */
export interface RecoverableJobs {
  listActive(): Promise<Array<{ account_id: string; id: string }>>;
  /** The job's state: `queued` (not started), `processing` (running: it may hold a lease), or ended. */
  get(accountId: string, id: string): Promise<{ status: 'queued' | 'processing' | 'ended' } | undefined>;
  releaseLease(accountId: string, id: string): Promise<unknown>;
  clearActive(accountId: string, id: string): Promise<void>;
  enqueue(accountId: string, id: string): Promise<void>;
}

/**
 * `releaseLeases`: the caller knows no worker is alive (local mode at start: one process, the
 * previous one is gone), so a running job's lease is released and the job is taken over at once
 * instead of after the lease runs out.
 */
export async function recoverJobs(jobs: RecoverableJobs, opts: { releaseLeases?: boolean } = {}): Promise<{ requeued: number; cleared: number }> {
  let requeued = 0;
  let cleared = 0;
  for (const { account_id, id } of await jobs.listActive()) {
    const job = await jobs.get(account_id, id);
    if (job && (job.status === 'queued' || job.status === 'processing')) {
      if (opts.releaseLeases && job.status === 'processing') await jobs.releaseLease(account_id, id);
      await jobs.enqueue(account_id, id);
      requeued++;
    } else {
      await jobs.clearActive(account_id, id);
      cleared++;
    }
  }
  return { requeued, cleared };
}

export const recoverImports = (opts: { releaseLeases?: boolean } = {}) => recoverJobs({ ...importRecovery(), enqueue: (account_id, import_id) => enqueueImport({ account_id, import_id }) }, opts);
