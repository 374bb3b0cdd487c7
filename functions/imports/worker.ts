import { jobQueueHandler } from '../../shared/http/job-handler.js';
import { parseImportMessage } from '../../shared/imports/storage.js';
import { importFairness, type ImportWorkerDeps, runImport } from '../../shared/imports/worker.js';

/**
 * The import worker: applies a job's rows chunk by chunk and, when the invocation runs short of
 * time, continues in a new message; a failure resumes from its last finished chunk. `deps`
 * replaces the worker's settings (tests inject crashes here).
 */
export const importHandler = (deps: ImportWorkerDeps = {}) =>
  jobQueueHandler({
    job: 'import',
    parse: parseImportMessage,
    logKeys: (m) => ({ importId: m.import_id }),
    run: (m, context) => runImport(m, { remainingMs: context ? () => context.getRemainingTimeInMillis() : undefined, ...deps }),
    fair: importFairness,
  });

export const handler = importHandler();
