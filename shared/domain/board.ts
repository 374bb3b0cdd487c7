/**
 * pipelines-board (contract §19): every stage of a pipeline in order, with its totals from the
 * stage counters (as projects-summary by stage, shared/domain/summaries.ts) and its newest
 * projects, read as projects-list with `filter: { field: "stage_id", op: "eq", value }` reads them
 * (the sorted index of `stage_id`), so a column's `next_cursor` continues through projects-list.
 * Reads: the pipeline, its stage counters (one Query, at most 30 items), and per stage one list
 * page of `limit` (its entries and records: at most 2 × limit + 2 items; docs/performance.md,
 * "Pipelines and summaries").
 */
import { getPipelineItem } from '../db/pipelines.js';
import { notFound } from '../errors.js';
import { parseWith } from '../schemas/common.js';
import { listParseSchema, projectEntity } from '../schemas/entities/index.js';
import { type Pipeline, pipelineSchema } from '../schemas/pipelines.js';
import { apiShape } from '../schemas/resource.js';
import { BOARD_DEFAULT_LIMIT, type PipelineBoard, type PipelineBoardInput } from '../schemas/summaries.js';
import type { OperationContext } from './context.js';
import { familyOf } from './records/family.js';
import { list } from './records/list.js';
import { stageCounters, stageGroups } from './summaries.js';

const toApi: (item: object) => Pipeline = apiShape(pipelineSchema);
/** The operation whose cursors the columns' `next_cursor` are (cursors are bound to their operation). */
const LIST_OPERATION = 'projects-list';

export async function pipelineBoard(ctx: OperationContext, input: PipelineBoardInput): Promise<PipelineBoard> {
  const limit = input.limit ?? BOARD_DEFAULT_LIMIT;
  const [pipeline, counters] = await Promise.all([getPipelineItem(ctx.accountId, input.pipeline_id), stageCounters(ctx.accountId, input.pipeline_id)]);
  if (!pipeline) throw notFound('pipelines', 'pipeline');
  const fam = familyOf(projectEntity);
  const listCtx: OperationContext = { ...ctx, operation: LIST_OPERATION };
  const groups = stageGroups(pipeline, counters);
  const shaped = toApi(pipeline);
  const columns = await Promise.all(
    shaped.stages.map(async (stage, i) => {
      const query = parseWith('projects', listParseSchema(projectEntity), { filter: { field: 'stage_id', op: 'eq', value: stage.id }, limit }) as Record<string, unknown>;
      const page = await list(fam, listCtx, query);
      const { count, amount, weighted_amount } = groups[i]!;
      return { stage, count, amount, weighted_amount, items: page.items, next_cursor: page.next_cursor };
    }),
  );
  return { pipeline: shaped, columns } as PipelineBoard;
}
