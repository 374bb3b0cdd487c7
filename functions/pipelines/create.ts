import { createPipeline } from '../../shared/domain/pipelines.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { pipelinesResource } from '../../shared/schemas/resources/pipelines.js';

export const handler = handle(pipelinesResource, 'create', (input, ctx) => createPipeline(ctx, input));
