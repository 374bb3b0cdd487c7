/** Keys of erasures (contract §18). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const JOBS = `${ACCOUNT}#era`;
const ACTIVE = 'ERASURES#ACTIVE';

export const ERASURE_KEYS = defineKeys({
  /** An erasure job: one item per job. */
  erasureJob: [`${JOBS}#{id}`, 'ERA'],
  /** GSI1 attributes of an erasure: the account's erasures, newest first. */
  erasureGsi: { gsi1: [JOBS, ORDER] },
  erasureListPartition: JOBS,
  /** Pending erasures (as `activeExport`): a restarted local mode finds and re-queues them. */
  activeErasure: [ACTIVE, '{account}#{id}'],
  activeErasuresPartition: ACTIVE,
  /**
   * One per erased contact, written in the erasure's create transaction (a second erasure of the
   * same contact finds the first), read by the stream worker (a change of an erased contact is
   * logged and delivered redacted).
   */
  erasureOfContact: [`${ACCOUNT}#erc#{contactId}`, 'ERC'],
  /** A suppressed email: the key is an HMAC of the lower-cased address (never the address). */
  suppressedEmail: [`${ACCOUNT}#sup#{hash}`, 'SUP'],
});

export const ERASURE_PERSONAL = /* @__PURE__ */ personalFlags(ERASURE_KEYS, { erasureJob: false, activeErasure: false, erasureOfContact: false, suppressedEmail: false });
