/**
 * Summaries (contract §21: `projects-summary`; the counts of `contacts-summary`,
 * `companies-summary`, `activities-summary` are count-summaries.ts) and the pipeline board (§19,
 * `pipelines-board`): their bodies, answers and declarations. The record families' resources add `summary`
 * (resources/entities.ts, `SUMMARY_OPERATIONS`), the pipelines' resource `board`.
 */
import * as v from 'valibot';
import { recordSchema } from './entities/define.js';
import { projectEntity } from './entities/project.js';
import { pipelineSchema, stageSchema } from './pipelines.js';
import { defineResource } from './resource.js';

const d = <S extends v.GenericSchema>(schema: S, description: string, example?: unknown) =>
  v.pipe(schema, v.metadata({ description, ...(example !== undefined ? { examples: [example] } : {}) }));
const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const month = (description: string) => d(v.pipe(v.string(), v.regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month, YYYY-MM')), description, '2026-01');

export const SUMMARY_GROUP_BY = ['stage', 'pipeline', 'owner', 'status', 'close_month'] as const;

export const projectsSummaryInput = v.strictObject({
  group_by: d(
    v.picklist(SUMMARY_GROUP_BY, 'must be stage, pipeline, owner, status or close_month'),
    'stage (needs pipeline_id), pipeline, owner (every active member, then deactivated members owning counted projects, then null: unowned), status or close_month (projects that left open, by the UTC month of closed_at)',
    'stage',
  ),
  pipeline_id: v.optional(d(uuid, 'Only the projects of this pipeline (required for group_by stage; not with group_by pipeline). Unknown: `projects.invalid_pipeline_id`', '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f')),
  owner_id: v.optional(
    d(
      v.union([v.literal('none'), uuid], 'must be a member id or "none"'),
      'Only the projects of this member (a member of the account, any status: else `projects.invalid_owner_id`), or "none": the unowned ones. Not with group_by owner',
      '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c',
    ),
  ),
  closed_from: v.optional(month('group_by close_month: the first month (default: 11 months before closed_to); at most 36 months in all')),
  closed_to: v.optional(month('group_by close_month: the last month (default: the current UTC month)')),
});
export type ProjectsSummaryInput = v.InferOutput<typeof projectsSummaryInput>;

const byCurrency = (description: string, example: Record<string, number>) => d(v.record(v.string(), v.pipe(v.number(), v.integer())), description, example);
const values = {
  count: d(v.pipe(v.number(), v.integer()), 'Projects in the group (trashed ones count nowhere)', 3),
  amount: byCurrency('Sums of the projects\' `amount` in cents, by currency ("" for none); a project with a null amount counts in `count` only', { USD: 150000 }),
  weighted_amount: byCurrency(
    'Sums of amount × probability / 100 by currency, rounded half up once per group and currency, from the stages\' current probabilities (outside a pipeline: open 0, completed 100, canceled 0)',
    { USD: 60000 },
  ),
};
const valuesSchema = v.object(values);
export type SummaryValues = v.InferOutput<typeof valuesSchema>;

export const summaryGroupSchema = v.object({
  key: d(v.nullable(v.string()), 'The group: a stage, pipeline or member id (null: projects outside any pipeline, unowned projects), a status, a month (YYYY-MM)', '5d0c7a8e-2b1f-4c3d-9e8f-7a6b5c4d3e2f'),
  label: d(v.string(), 'The stage\'s, pipeline\'s or member\'s current name, the status, the month', 'Proposal'),
  ...values,
});
export type SummaryGroup = v.InferOutput<typeof summaryGroupSchema>;

export const summaryResult = v.object({
  groups: d(v.array(summaryGroupSchema), 'Every group, even when empty: stages in order, pipelines as pipelines-list then null, active members by name then deactivated ones owning counted projects then null, statuses, months in order'),
  total: d(valuesSchema, 'The groups together (weighted amounts rounded once per currency)'),
  as_of: d(v.pipe(v.string(), v.isoTimestamp()), 'The commit time of the newest change the counts include (the time of reading when none has been counted)', '2026-11-22T01:16:30.123Z'),
});
export type SummaryResult = v.InferOutput<typeof summaryResult>;

/** projects-summary, declared beside the board (the projects' resource adds it: resources/entities.ts). */
export const projectsSummaryOperation = {
  access: 'read',
  summary: 'Counts and sums of projects by stage, pipeline, owner, status or close month',
  description:
    'Answered from counters the changes worker keeps (within 5 s of a write locally; exact once writes stop): a few reads whatever the number of projects. `weighted_amount` uses the stages\' current probabilities. Errors: `projects.invalid_request` with `details` (group_by stage without pipeline_id, owner_id with group_by owner, a month range over 36 months or reversed), `projects.invalid_pipeline_id` for a pipeline that is not the account\'s, `projects.invalid_owner_id` for an owner_id that is no member of it.',
  input: projectsSummaryInput,
  result: summaryResult,
  errors: ['projects.invalid_pipeline_id', 'projects.invalid_owner_id'],
  items: { reads: ['summaries'] },
} as const;

/** The groupings of the count summaries, by record type (contract §21; their declarations: count-summaries.ts). */
export const COUNT_GROUP_BY = { contact: ['owner', 'source'], company: ['owner'], activity: ['assignee', 'type'] } as const;
export type CountedType = keyof typeof COUNT_GROUP_BY;

// --- pipelines-board -------------------------------------------------------------------------------

export const BOARD_DEFAULT_LIMIT = 10;
export const BOARD_MAX_LIMIT = 25;

export const pipelineBoardInput = v.strictObject({
  pipeline_id: d(uuid, 'The pipeline', '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f'),
  limit: v.optional(
    d(v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(BOARD_MAX_LIMIT, `must be at most ${BOARD_MAX_LIMIT}`)), `Projects per column, 1–${BOARD_MAX_LIMIT} (default ${BOARD_DEFAULT_LIMIT})`, BOARD_DEFAULT_LIMIT),
  ),
});
export type PipelineBoardInput = v.InferOutput<typeof pipelineBoardInput>;

export const boardColumnSchema = v.object({
  stage: stageSchema,
  ...values,
  items: d(v.array(recordSchema(projectEntity)), 'The stage\'s newest projects, as projects-list with `filter: { field: "stage_id", op: "eq", value }` returns them'),
  next_cursor: d(v.string(), 'Continues the column: pass as `cursor` to projects-list with that filter (and the same limit); "" when the column is complete', ''),
});

export const pipelineBoardResult = v.object({
  pipeline: pipelineSchema,
  columns: d(v.array(boardColumnSchema), 'Every stage in order, with its totals and newest projects'),
});
export type PipelineBoard = v.InferOutput<typeof pipelineBoardResult>;

/** pipelines-board, declared here (the pipelines' resource adds it as `board`), so its handler carries no other pipeline operation. */
export const pipelineBoardOperation = {
  access: 'read',
  summary: 'A pipeline\'s board: every stage with its totals and newest projects',
  description:
    'Every stage in order with `count`, `amount` and `weighted_amount` (as projects-summary by stage) and its newest projects (`limit` per column, 1–25, default 10), as projects-list with `filter: { field: "stage_id", op: "eq", value: <stage id> }` returns them; a column\'s `next_cursor` continues it through projects-list with that filter and limit. Reads the pipeline, its stage counters and one projects-list page per column (at most 2 × limit + 2 items each), however many projects the pipeline holds. An unknown pipeline: `pipelines.not_found`.',
  input: pipelineBoardInput,
  result: pipelineBoardResult,
  errors: ['pipelines.invalid_id', 'pipelines.not_found'],
  body: { ids: ['pipeline_id'] },
  items: { reads: ['summaries'] },
} as const;

/**
 * The board alone as a resource of the pipelines family (its handler's definition: the same
 * declaration the pipelines' resource lists as `board`), so the board's bundle carries no other
 * pipeline operation's rules.
 */
export const pipelineBoardResource = defineResource({ family: 'pipelines', prefix: 'pipelines', keys: {}, components: {}, operations: { board: pipelineBoardOperation } });
