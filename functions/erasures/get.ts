import { getErasure } from '../../shared/erasures/jobs.js';
import { handle } from '../../shared/http/resource.js';
import { erasuresResource } from '../../shared/schemas/resources/erasures.js';

export const handler = handle(erasuresResource, 'get', ({ id }, ctx) => getErasure(ctx, id));
