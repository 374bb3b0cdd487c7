/** Keys of import jobs (contract §10). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const JOB = `${ACCOUNT}#imp#{id}`;
const JOBS = `${ACCOUNT}#imp`;
const ACTIVE = 'IMPORTS#ACTIVE';
const ERROR = 'E#';

export const IMPORT_KEYS = defineKeys({
  /** An import job: one partition per job, holding the job item and its row errors. */
  importJob: [JOB, 'IMP'],
  importPartition: JOB,
  /** GSI1 attributes of a job: the account's imports, newest first. */
  importGsi: { gsi1: [JOBS, ORDER] },
  importListPartition: JOBS,
  /**
   * Jobs that were queued: one small marker each in one installation-wide partition, so a
   * restarted local mode (whose in-memory queue lost its messages) finds and re-queues them.
   */
  activeImport: [ACTIVE, '{account}#{id}'],
  activeImportsPartition: ACTIVE,
  /** A row error of a job, sorted by row number. */
  importError: [JOB, `${ERROR}{row:9}`],
  importErrorPrefix: ERROR,
});

/** A row error holds the offending value of a row (the file itself is an object, reached through the job). */
export const IMPORT_PERSONAL = /* @__PURE__ */ personalFlags(IMPORT_KEYS, { importJob: false, activeImport: false, importError: true });
