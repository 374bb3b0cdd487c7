import { pipelineBoard } from '../../shared/domain/board.js';
import { handle } from '../../shared/http/resource.js';
import { pipelineBoardResource } from '../../shared/schemas/summaries.js';

export const handler = handle(pipelineBoardResource, 'board', (input, ctx) => pipelineBoard(ctx, input));
