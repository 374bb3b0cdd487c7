import { createErasure } from '../../shared/erasures/jobs.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { erasuresResource } from '../../shared/schemas/resources/erasures.js';

export const handler = handle(erasuresResource, 'create', (input, ctx) => createErasure(ctx, input));
