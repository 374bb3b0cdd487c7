import { listErasures } from '../../shared/erasures/jobs.js';
import { handle } from '../../shared/http/resource.js';
import { erasuresResource } from '../../shared/schemas/resources/erasures.js';

export const handler = handle(erasuresResource, 'list', (input, ctx) => listErasures(ctx, input));
