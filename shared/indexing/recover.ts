/** Re-queues queued and running index builds (and stage moves, reassignments) whose queue message is gone (local mode's queue lives in memory), as the imports' recovery. */
import { indexBuildRecovery } from '../db/index-builds.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueIndexBuild } from './storage.js';

export const recoverIndexBuilds = (opts: { releaseLeases?: boolean } = {}) => recoverJobs({ ...indexBuildRecovery(), enqueue: (account_id, build_id) => enqueueIndexBuild({ account_id, build_id }) }, opts);
