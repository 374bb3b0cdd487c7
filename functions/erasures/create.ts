import { createErasure } from '../../shared/erasures/jobs.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { handle } from '../../shared/http/resource.js';
import { erasuresResource } from '../../shared/schemas/resources/erasures.js';

export const handler = handle(erasuresResource, 'create', (input, ctx) => createErasure(ctx, input), { wrap: idempotentCreate() });
