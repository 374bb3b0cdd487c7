import { idempotentCreate } from '../../shared/http/idempotency.js';
import { createHandler } from '../../shared/http/crud.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = createHandler(activityEntity, { wrap: idempotentCreate() });
