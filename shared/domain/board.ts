/**
 * pipelines-board (contract §19): every stage of a pipeline in order, with its totals from the
 * stage counters (as projects-summary by stage, shared/domain/summaries.ts) and its newest
 * projects, read from the index projects-list reads with `filter: { field: "stage_id", op: "eq",
 * value }` (GSI2: a stage's records newest first, on the records themselves), so a column's
 * `next_cursor` continues through projects-list.
 * Reads: the pipeline, its stage counters (one Query, at most 30 items), the account's META item,
 * and per stage one Query of `limit` records (whether more exist: the stage's count; `stageColumn`):
 * at most 32 + 30 × limit items, within the contract's 30 + 30 × (limit + 1) (docs/performance.md,
 * "Pipelines and summaries").
 */
import { readMeta } from '../db/meta.js';
import { getPipelineItem } from '../db/pipelines.js';
import { notFound } from '../errors.js';
import { parseWith } from '../schemas/common.js';
import { listParseSchema, projectEntity } from '../schemas/entities/index.js';
import { type Pipeline, pipelineSchema } from '../schemas/pipelines.js';
import { apiShape } from '../schemas/resource.js';
import { BOARD_DEFAULT_LIMIT, type PipelineBoard, type PipelineBoardInput } from '../schemas/summaries.js';
import type { OperationContext } from './context.js';
import { familyOf } from './records/family.js';
import { stageColumn } from './records/list.js';
import { stageCounters, stageGroups } from './summaries.js';

const toApi: (item: object) => Pipeline = apiShape(pipelineSchema);
/** The operation whose cursors the columns' `next_cursor` are (cursors are bound to their operation). */
const LIST_OPERATION = 'projects-list';

export async function pipelineBoard(ctx: OperationContext, input: PipelineBoardInput): Promise<PipelineBoard> {
  const limit = input.limit ?? BOARD_DEFAULT_LIMIT;
  const [pipeline, counters, meta] = await Promise.all([getPipelineItem(ctx.accountId, input.pipeline_id), stageCounters(ctx.accountId, input.pipeline_id), readMeta(ctx.accountId)]);
  if (!pipeline) throw notFound('pipelines', 'pipeline');
  const fam = familyOf(projectEntity);
  const listCtx: OperationContext = { ...ctx, operation: LIST_OPERATION };
  const groups = stageGroups(pipeline, counters);
  const shaped = toApi(pipeline);
  const columns = await Promise.all(
    shaped.stages.map(async (stage, i) => {
      const query = parseWith('projects', listParseSchema(projectEntity), { filter: { field: 'stage_id', op: 'eq', value: stage.id }, limit }) as Record<string, unknown>;
      const { count, amount, weighted_amount } = groups[i]!;
      const page = await stageColumn(fam, listCtx, query, stage.id, count, meta);
      return { stage, count, amount, weighted_amount, items: page.items, next_cursor: page.next_cursor };
    }),
  );
  return { pipeline: shaped, columns } as PipelineBoard;
}
