import { updatePipeline } from '../../shared/domain/pipelines.js';
import { handle } from '../../shared/http/resource.js';
import { pipelinesResource } from '../../shared/schemas/resources/pipelines.js';

export const handler = handle(pipelinesResource, 'update', (input, ctx) => updatePipeline(ctx, input));
