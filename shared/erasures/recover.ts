/** Re-queues pending erasures whose queue message is gone (local mode's queue lives in memory), with the imports' recovery. */
import { erasureRecovery } from '../db/erasures.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueErasure } from './storage.js';

export const recoverErasures = (opts: { releaseLeases?: boolean } = {}) => recoverJobs({ ...erasureRecovery(), enqueue: (account_id, erasure_id) => enqueueErasure({ account_id, erasure_id }) }, opts);
