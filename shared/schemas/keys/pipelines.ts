/** Keys of pipelines and their stages (contract §19). */
import { ACCOUNT, defineKeys, personalFlags } from './define.js';

const PIPELINES = `${ACCOUNT}#pl`;

export const PIPELINE_KEYS = defineKeys({
  /** A pipeline with its ordered stages: one partition per account (at most 50 items, read whole by pipelines-list). */
  pipeline: [PIPELINES, '{id}'],
  pipelinePartition: PIPELINES,
  /**
   * The account's pipelines head: `count` (at most 50) and `default_id`, changed in the same
   * transaction as the pipelines it counts, so the limit and the one default hold under races.
   */
  pipelineHead: [`${ACCOUNT}#plh`, 'H'],
  /**
   * A pipeline's use: `n` projects in it (trashed ones included) and `s_<stage id>` per stage,
   * written in the project's transaction; pipelines-delete requires `n` = 0 in its own.
   */
  pipelineUse: [`${PIPELINES}#{id}`, 'U'],
  /**
   * A project's stage history: one visit per stay in a stage, numbered from 1 in the order they
   * began (`{seq:6}`), put when the stay begins and closed when it ends, each in the transaction
   * of the project's write that starts or ends it.
   */
  stageVisit: [`${ACCOUNT}#sv#{projectId}`, '{seq:6}'],
  stageVisitPartition: `${ACCOUNT}#sv#{projectId}`,
});

export const PIPELINE_PERSONAL = /* @__PURE__ */ personalFlags(PIPELINE_KEYS, { pipeline: false, pipelineHead: false, pipelineUse: false, stageVisit: false });
