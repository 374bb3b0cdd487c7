import { erasureFairness, type ErasureWorkerDeps, runErasure } from '../../shared/erasures/worker.js';
import { parseErasureMessage } from '../../shared/erasures/storage.js';
import { jobQueueHandler } from '../../shared/http/job-handler.js';
import { logger } from '../../shared/http/logger.js';

/** The erasure worker: a failure leaves the message; the erasure resumes at its saved step. */
export const erasureHandler = (deps: ErasureWorkerDeps = {}) =>
  jobQueueHandler({ job: 'erasure', parse: parseErasureMessage, logKeys: (m) => ({ erasureId: m.erasure_id }), run: (m) => runErasure(m, deps), fair: erasureFairness });

/**
 * Local mode's crash drill (test/integration/crash-drill.test.ts): with
 * `CRM_ERASURE_HOLD_AT=<step>` the worker logs `erasure held` once that step's work is done and
 * waits there, its end not saved, until the process is killed. Ignored outside local mode.
 */
const holdAt = (step: string): Promise<void> | undefined => {
  if (process.env.CRM_LOCAL !== 'true' || !process.env.CRM_ERASURE_HOLD_AT || process.env.CRM_ERASURE_HOLD_AT !== step) return undefined;
  logger.warn('erasure held', { step });
  return new Promise<void>(() => undefined);
};

export const handler = erasureHandler({ beforeSave: holdAt });
