/** Re-queues running index builds and reassignments whose queue message is gone (local mode's queue lives in memory), as the imports' recovery. */
import { indexBuildRecovery } from '../db/index-builds.js';
import { reassignmentRecovery } from '../db/reassignments.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueIndexBuild } from './storage.js';

export const recoverIndexBuilds = async (opts: { releaseLeases?: boolean } = {}) => {
  const enqueue = (account_id: string, build_id: string) => enqueueIndexBuild({ account_id, build_id });
  const builds = await recoverJobs({ ...indexBuildRecovery(), enqueue }, opts);
  const reassignments = await recoverJobs({ ...reassignmentRecovery(), enqueue }, opts);
  return { requeued: builds.requeued + reassignments.requeued, cleared: builds.cleared + reassignments.cleared };
};
