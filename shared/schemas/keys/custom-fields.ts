/** Keys of custom-field definitions (contract §3): one partition per account. */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const FIELDS = `${ACCOUNT}#cf`;
const BUILDS = `${ACCOUNT}#ixb`;
const ACTIVE_BUILDS = 'INDEXBUILDS#ACTIVE';

export const CUSTOM_FIELD_KEYS = defineKeys({
  customField: [FIELDS, '{id}'],
  customFieldPartition: FIELDS,
  /**
   * An index build (contract §17): applying a change of a definition's `indexed` to the existing
   * records (sort-ordered entries written or removed), one item per change, moved by the job
   * store's conditional updates (its saved position, the worker's lease).
   */
  indexBuildJob: [`${BUILDS}#{id}`, 'IXB'],
  indexBuildGsi: { gsi1: [BUILDS, ORDER] },
  indexBuildListPartition: BUILDS,
  /** Running builds (as `activeExport`): a restarted local mode finds and re-queues them. */
  activeIndexBuild: [ACTIVE_BUILDS, '{account}#{id}'],
  activeIndexBuildsPartition: ACTIVE_BUILDS,
});

export const CUSTOM_FIELD_PERSONAL = /* @__PURE__ */ personalFlags(CUSTOM_FIELD_KEYS, { customField: false, indexBuildJob: false, activeIndexBuild: false });
