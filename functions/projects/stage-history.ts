import { stageHistory } from '../../shared/domain/stage-history.js';
import { handle } from '../../shared/http/resource.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';
import { entityResource } from '../../shared/schemas/resources/entities.js';
import type { stageHistoryInput } from '../../shared/schemas/pipelines.js';
import type * as v from 'valibot';

export const handler = handle(entityResource(projectEntity), 'stage-history', (input, ctx) => stageHistory(ctx, input as v.InferOutput<typeof stageHistoryInput>));
