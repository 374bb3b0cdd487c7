/** Keys of reassignments (contract §20): jobs that hand one member's records on to another. */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const JOBS = `${ACCOUNT}#rsg`;
const ACTIVE = 'REASSIGNMENTS#ACTIVE';

export const REASSIGNMENT_KEYS = defineKeys({
  /** A reassignment job: one item per job, moved by the job store's conditional updates (its saved position, the worker's lease). */
  reassignmentJob: [`${JOBS}#{id}`, 'RSG'],
  /** GSI1 attributes of a reassignment: the account's reassignments, newest first. */
  reassignmentGsi: { gsi1: [JOBS, ORDER] },
  reassignmentListPartition: JOBS,
  /** Queued and running reassignments (as `activeExport`): a restarted local mode finds and re-queues them. */
  activeReassignment: [ACTIVE, '{account}#{id}'],
  activeReassignmentsPartition: ACTIVE,
});

/** A job holds member ids and counts, no person's data. */
export const REASSIGNMENT_PERSONAL = /* @__PURE__ */ personalFlags(REASSIGNMENT_KEYS, { reassignmentJob: false, activeReassignment: false });
