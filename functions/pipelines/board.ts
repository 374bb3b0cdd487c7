import { pipelineBoard } from '../../shared/domain/board.js';
import { handle } from '../../shared/http/resource.js';
import { pipelinesResource } from '../../shared/schemas/resources/pipelines.js';

export const handler = handle(pipelinesResource, 'board', (input, ctx) => pipelineBoard(ctx, input));
