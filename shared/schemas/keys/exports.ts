/** Keys of export jobs (contract §16). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const JOBS = `${ACCOUNT}#exp`;
const ACTIVE = 'EXPORTS#ACTIVE';

export const EXPORT_KEYS = defineKeys({
  /** An export job: one item per job. */
  exportJob: [`${JOBS}#{id}`, 'EXP'],
  /** GSI1 attributes of an export job: the account's exports, newest first. */
  exportGsi: { gsi1: [JOBS, ORDER] },
  exportListPartition: JOBS,
  /** Queued export jobs (as `activeImport`): a restarted local mode finds and re-queues them. */
  activeExport: [ACTIVE, '{account}#{id}'],
  activeExportsPartition: ACTIVE,
});

/** The export's file is an object (reached by the erasure through the job); the job item holds its filters only. */
export const EXPORT_PERSONAL = /* @__PURE__ */ personalFlags(EXPORT_KEYS, { exportJob: false, activeExport: false });
