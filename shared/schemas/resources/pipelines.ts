/** Pipelines and their stages (contract §19): the family's operations, declared once (see ../resource.ts). */
import { idOnlyInput } from '../common.js';
import { PIPELINE_KEYS } from '../keys/pipelines.js';
import {
  parsePipelineCreate,
  parsePipelineUpdate,
  pipelineCreateInput,
  pipelineListInput,
  pipelineListResult,
  pipelineSchema,
  pipelineUpdateInput,
  stageSchema,
} from '../pipelines.js';
import { BY_ID, defineResource } from '../resource.js';
import { boardColumnSchema, pipelineBoardOperation, pipelineBoardResult } from '../summaries.js';
import { deletedSchema } from './shared.js';

export const pipelinesResource = defineResource({
  family: 'pipelines',
  prefix: 'pipelines',
  keys: PIPELINE_KEYS,
  components: {
    Pipeline: pipelineSchema,
    PipelineStage: stageSchema,
    PipelineList: pipelineListResult,
    PipelineCreateInput: pipelineCreateInput,
    PipelineUpdateInput: pipelineUpdateInput,
    PipelineBoard: pipelineBoardResult,
    PipelineBoardColumn: boardColumnSchema,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      summary: 'Create a pipeline with its ordered stages',
      description:
        'Stages: 3–30, at least one of each kind (open, won, lost), names unique case- and accent-insensitively; ids are generated. The account\'s first pipeline is its default; `is_default: true` moves the default. At most 50 pipelines per account (`pipelines.limit_exceeded`).',
      input: pipelineCreateInput,
      result: pipelineSchema,
      errors: ['pipelines.limit_exceeded'],
      parse: parsePipelineCreate,
    },
    get: { access: 'read', summary: 'Get a pipeline', input: idOnlyInput, result: pipelineSchema, body: BY_ID, errors: ['pipelines.invalid_id', 'pipelines.not_found'] },
    list: { access: 'read', summary: 'List the account\'s pipelines: the default first, then by creation', input: pipelineListInput, result: pipelineListResult },
    update: {
      access: 'write',
      summary: 'Rename a pipeline, replace its stages, make it the default',
      description:
        '`stages` is the whole new ordered list: a stage sent with its `id` keeps its identity, one without is new. A stage left out, or whose kind changes, that holds projects needs `move_to` (else 409 `pipelines.stage_in_use`): the change commits at once and a job moves those projects (as projects-update, actor system) within a minute; until then they stay in the old stage, which no write can name. `expected_version` other than the current `version`: 409 `pipelines.conflict`. Every change adds 1 to `version`.',
      input: pipelineUpdateInput,
      result: pipelineSchema,
      errors: ['pipelines.conflict', 'pipelines.stage_in_use'],
      parse: parsePipelineUpdate,
      // move_to queues the move of the stages' projects on the index-build queue (a job over existing records).
      bindings: { indexBuildsQueue: 'send' },
    },
    board: pipelineBoardOperation,
    delete: {
      access: 'write',
      summary: 'Delete a pipeline that holds no project',
      description: '409 `pipelines.in_use` while a project is in it (trashed ones included); the default pipeline can be deleted only when it is the account\'s last (else 409 `pipelines.conflict`).',
      input: idOnlyInput,
      result: deletedSchema,
      body: BY_ID,
      errors: ['pipelines.in_use', 'pipelines.conflict'],
    },
  },
});
