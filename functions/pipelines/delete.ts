import { deletePipeline } from '../../shared/domain/pipelines.js';
import { handle } from '../../shared/http/resource.js';
import { pipelinesResource } from '../../shared/schemas/resources/pipelines.js';

export const handler = handle(pipelinesResource, 'delete', ({ id }, ctx) => deletePipeline(ctx, id));
