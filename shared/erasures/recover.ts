/** Re-queues pending erasures whose queue message is gone (local mode's queue lives in memory), with the imports' recovery. */
import { clearActiveErasure, getErasureItem, listActiveErasures, updateErasureItem } from '../db/erasures.js';
import { recoverJobs } from '../imports/recover.js';
import { enqueueErasure } from './storage.js';

export const recoverErasures = (opts: { releaseLeases?: boolean } = {}) =>
  recoverJobs(
    {
      listActive: async () => (await listActiveErasures()).map((m) => ({ account_id: m.account_id, id: m.erasure_id })),
      // A pending erasure is a running job (it may hold a lease).
      get: async (accountId, id) => {
        const item = await getErasureItem(accountId, id);
        return item && { status: item.status === 'pending' ? 'processing' : item.status };
      },
      releaseLease: (accountId, id) => updateErasureItem(accountId, id, { lease_until: 0 }, { statusIn: ['pending'] }),
      clearActive: clearActiveErasure,
      enqueue: (account_id, erasure_id) => enqueueErasure({ account_id, erasure_id }),
    },
    opts,
  );
