/** Re-queues running index builds whose queue message is gone (local mode's queue lives in memory), as the imports' recovery. */
import { clearActiveIndexBuild, getIndexBuild, listActiveIndexBuilds, updateIndexBuild } from '../db/index-builds.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueIndexBuild } from './storage.js';

export const recoverIndexBuilds = (opts: { releaseLeases?: boolean } = {}) =>
  recoverJobs(
    {
      listActive: async () => (await listActiveIndexBuilds()).map((m) => ({ account_id: m.account_id, id: m.build_id })),
      get: (accountId, id) => getIndexBuild(accountId, id),
      releaseLease: (accountId, id) => updateIndexBuild(accountId, id, { lease_until: 0 }, { statusIn: ['processing'] }),
      clearActive: clearActiveIndexBuild,
      enqueue: (account_id, build_id) => enqueueIndexBuild({ account_id, build_id }),
    },
    opts,
  );
