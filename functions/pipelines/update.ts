import { updatePipeline } from '../../shared/domain/pipelines.js';
import { handle } from '../../shared/http/resource.js';
import { enqueueIndexBuild } from '../../shared/indexing/storage.js';
import { pipelinesResource } from '../../shared/schemas/resources/pipelines.js';

// A change with move_to queues the move of the stages' projects (shared/indexing/stage-moves.ts).
export const handler = handle(pipelinesResource, 'update', (input, ctx) => updatePipeline(ctx, input, enqueueIndexBuild));
