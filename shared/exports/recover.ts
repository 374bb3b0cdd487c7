/**
 * Re-queues export jobs whose queue message is gone (local mode's queue lives in memory), with
 * the imports' recovery (shared/imports/recover.ts): the worker that takes a re-queued job starts
 * its file again (a new multipart upload; the interrupted one is aborted), so no truncated file
 * is ever marked completed.
 */
import { exportRecovery } from '../db/exports.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueExport } from './storage.js';

export const recoverExports = (opts: { releaseLeases?: boolean } = {}) => recoverJobs({ ...exportRecovery(), enqueue: (account_id, export_id) => enqueueExport({ account_id, export_id }) }, opts);
