import { parseExportMessage } from '../../shared/exports/storage.js';
import { exportFairness, type ExportWorkerDeps, runExport } from '../../shared/exports/worker.js';
import { jobQueueHandler } from '../../shared/http/job-handler.js';

/**
 * The export worker: writes a job's file; a failure starts the file again (shared/exports/worker.ts).
 * `deps` replaces the worker's settings (tests inject crashes).
 */
export const exportHandler = (deps: ExportWorkerDeps = {}) =>
  jobQueueHandler({ job: 'export', parse: parseExportMessage, logKeys: (m) => ({ exportId: m.export_id }), run: (m) => runExport(m, deps), fair: exportFairness });

export const handler = exportHandler();
